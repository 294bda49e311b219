// createApp(deps): one Koa application for every route: the system routes (@koa/router) and the API (openapi-backend).
import Koa, { type Context } from 'koa';
import { createApi, type ApiDeps } from './http/api.js';
import { ApiError, methodNotAllowed } from './errors.js';
import { asApiError, errorReply } from './error-answers.js';
import { accessLogger, type Logger } from './http/logging.js';
import type { Metrics } from './http/metrics.js';
import { newRequestId, writeReply } from './http/reply-writer.js';
import type { ApiState } from './http/state.js';
import type { Reply } from './operations/types.js';
import { createSystemRoutes, type SystemRoutesDeps } from './http/system-routes.js';
import { serverSpans } from './http/server-spans.js';
import type { Tracer } from '@opentelemetry/api';

export interface AppDeps extends Omit<ApiDeps, 'document'>, SystemRoutesDeps {
  logger: Logger;
  metrics: Metrics;
  /** Whether shutdown has begun (compose.ts's beginDrain, on SIGTERM or SIGINT). */
  draining: () => boolean;
  /** Set when tracing is on (OTEL_* environment): a server span per request. Unset, no tracing work per request. */
  tracer?: Tracer;
}

/** Name and message only: a stack or an object dump could carry request data. */
function describe(err: unknown): { name: string; message: string } {
  return err instanceof Error ? { name: err.name, message: err.message } : { name: typeof err, message: 'non-error thrown' };
}

/** The methods of every system route (@koa/router answers HEAD as GET). */
const SYSTEM_METHODS = ['GET', 'HEAD'] as const;

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const noNext = async (): Promise<void> => {};
const answeredByKoa = (): undefined => undefined;

/**
 * A reply sent before the request's body arrived (a 401, 404 or 413, a system route): close the connection after it
 * rather than let Node read the rest, which a client trickling a body could stretch to the request timeout. Node hands
 * the request over before the parser has read the body that came in the same packet: one turn of the event loop
 * lets it finish; a body still incomplete after that is not waited for.
 */
function bodyUnread(ctx: Context): boolean | Promise<boolean> {
  const req = ctx.req;
  // The JSON reader may have read a body whole before Node marked its request complete (json-body-fast/).
  if (req.complete || (ctx.state as ApiState).bodyReadWhole) return false;
  const declared = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0;
  if (!declared) return false;
  return nextTurn().then(() => !req.complete);
}

export async function createApp(deps: AppDeps): Promise<Koa> {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const { handle: api } = await createApi({ ...deps, document: deps.spec.document });
  const system = createSystemRoutes(deps);
  const systemPaths = new Set(system.stack.map((layer) => layer.path));
  const systemRoutes = system.routes() as unknown as Koa.Middleware;
  const access = accessLogger(deps.logger);
  const { logger, metrics } = deps;
  if (deps.tracer) app.use(serverSpans(deps.tracer));

  /**
   * The API's answer, or undefined when a system route answered through Koa's respond(). The system routes match
   * exactly (no trailing slash); any method but GET and HEAD is a 405 there. Called from the error middleware rather
   * than mounted as a middleware of its own: one async frame less per request.
   */
  const route = (ctx: Context): Promise<Reply | undefined> => {
    if (ctx.path.startsWith('/api/') || !systemPaths.has(ctx.path)) {
      // Once shutdown has begun no API request starts: the server's lifecycle, decided before openapi-backend (a
      // preRoutingHandler would cost every request one more await while serving).
      if (deps.draining()) throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'server is shutting down', { headers: { 'Retry-After': '5' } });
      return api(ctx);
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw methodNotAllowed(ctx.method, SYSTEM_METHODS);
    }
    return systemRoutes(ctx, noNext).then(answeredByKoa);
  };

  /**
   * The one error middleware and the one place a request id is made: every thrown error becomes ErrorInfo (a fault is
   * logged with its operation), every answer carries X-Request-Id (but the 401, openapi.yaml Authentication). Once
   * draining has begun every answer says `Connection: close`, so that Node closes each connection after it.
   */
  app.use(async (ctx) => {
    // A double, not a BigInt per reading (issue #48).
    const started = performance.now();
    const requestId = newRequestId();
    const state = ctx.state as ApiState;
    state.requestId = requestId;
    state.operationId = 'unmatched';
    state.route = null;
    state.keyId = null;
    state.bodyReadWhole = false;
    let reply;
    try {
      reply = await route(ctx);
    } catch (err) {
      reply = errorReply(err, ctx.path, requestId);
      if (asApiError(err) === null) logger.error({ requestId, operationId: state.operationId, err: describe(err) }, 'unexpected error');
    }
    const unread = bodyUnread(ctx);
    // Answered at once in the usual case (the body was read, or there was none): no extra turn for every request.
    const close = (typeof unread === 'boolean' ? unread : await unread) || deps.draining();
    if (!reply) {
      // A system route answered through Koa's own respond().
      if (!ctx.response.get('x-request-id')) ctx.set('x-request-id', requestId);
      if (close) ctx.set('connection', 'close');
      return;
    }
    ctx.respond = false;
    writeReply(ctx.res, ctx.method, reply, requestId, state.limitHeaders, close);
    const seconds = (performance.now() - started) / 1e3;
    metrics.observe(state.operationId, reply.status, seconds);
    access.write({
      requestId,
      method: ctx.method,
      route: state.route,
      operationId: state.operationId,
      status: reply.status,
      durationMs: Math.round(seconds * 1e6) / 1e3,
      keyId: state.keyId,
      traceId: state.traceId,
    });
  });

  return app;
}

