// The server span of each request (OpenTelemetry HTTP semantic conventions; W3C Trace Context in): mounted by
// createApp only when tracing is on, so that without it a request does no tracing work at all.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type Koa from 'koa';
import type { ApiState } from './state.js';

const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

/**
 * Opens a SERVER span from the incoming `traceparent` (a new trace without one), runs the request inside it and puts
 * its trace id on ctx.state for the access log. Named by the operationId once routed (`http.route` the template);
 * never a path, query, header value or body in an attribute (a path can hold an IBAN or an email address).
 */
export function serverSpans(tracer: Tracer): Koa.Middleware {
  return (ctx, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, ctx.req.headers, headerGetter);
    const span = tracer.startSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.scheme': 'http', 'network.protocol.version': ctx.req.httpVersion } },
      parent,
    );
    const state = ctx.state as ApiState;
    state.traceId = span.spanContext().traceId;
    const end = () => {
      const status = ctx.res.statusCode;
      if (state.operationId && state.operationId !== 'unmatched') span.updateName(state.operationId);
      if (state.route) span.setAttribute('http.route', state.route);
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    };
    return context.with(trace.setSpan(parent, span), next).finally(end);
  };
}
