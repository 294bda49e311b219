// OpenTelemetry spans of the calls that leave the process (OTel trace API, semantic conventions' attribute names).
// The one module adapters call: without tracing (no tracer set) or outside a traced request it runs the call alone.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Tracer } from '@opentelemetry/api';

let tracer: Tracer | null = null;

/** Set by the tracing start-up (src/adapters/tracing/sdk.ts) when tracing is on; null keeps every call untraced. */
export function setTracer(t: Tracer | null): void {
  tracer = t;
}

/** The error's kind for `error.type`: a code or class name, never its message (which may quote the request's data). */
function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) return code;
  return err instanceof Error ? err.name : 'unknown';
}

/**
 * `call` inside a client span named `name`, child of the request's span, with `attributes` (semantic conventions;
 * never a secret or a value a client sent but a domain name). Outside a traced request, `call()` alone: background
 * work (the key feed, Redis health checks) makes no root spans.
 */
export function traced<T>(name: string, attributes: Attributes, call: () => Promise<T>): Promise<T> {
  if (tracer === null) return call();
  const parent = context.active();
  if (trace.getSpan(parent) === undefined) return call();
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  return context.with(trace.setSpan(parent, span), call).then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      span.setAttribute('error.type', errorType(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw err;
    },
  );
}

/** W3C `traceparent` (and `tracestate`) of the current span into an outgoing request's header fields. */
export function withTraceContext(headers: Record<string, string>): Record<string, string> {
  if (tracer !== null) propagation.inject(context.active(), headers);
  return headers;
}

/** Attributes added to the span `traced` runs its call in (what is learnt during the call: reply codes, TLS). */
export function annotate(attributes: Attributes): void {
  if (tracer !== null) trace.getActiveSpan()?.setAttributes(attributes);
}
