// createApp(deps): API dispatch straight on node:http, the non-API routes on Koa, 404 for the rest. No listen.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import Koa from 'koa';
import { createDispatch, splitTarget, type DispatchDeps } from './http/dispatch.js';
import { ApiError, errorReply } from './http/errors.js';
import { addHeaders, sendJson } from './http/send-json.js';
import { createSystemRoutes, type SystemRoutesDeps } from './http/system-routes.js';

export type AppDeps = DispatchDeps & SystemRoutesDeps;

export interface App {
  /** The node:http request listener: /api and unknown paths to the dispatcher, the system routes to Koa. */
  callback(): RequestListener;
}

export function createApp(deps: AppDeps): App {
  const koa = new Koa({ proxy: false });
  koa.silent = true;
  const dispatch = createDispatch(deps);
  const system = createSystemRoutes(deps);
  const systemPaths = new Set(system.stack.map((layer) => layer.path));
  const systemRoutes = system.routes() as unknown as Koa.Middleware;

  // Last-resort net: whatever escapes still answers ErrorInfo, without internals.
  koa.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      logUnhandled(err);
      ctx.respond = false;
      if (!ctx.res.headersSent) writeError(ctx.res, ctx.path, new ApiError(500, 'INTERNAL_ERROR', 'internal server error'));
      else ctx.res.destroy();
    }
  });
  koa.use(async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      const allow = 'GET, HEAD';
      writeError(ctx.res, ctx.path, new ApiError(405, 'METHOD_NOT_ALLOWED', `method ${ctx.method} is not allowed on this path`, { headers: { Allow: allow } }));
      ctx.respond = false;
      return;
    }
    return systemRoutes(ctx, next);
  });
  const koaListener = koa.callback();

  function logUnhandled(err: unknown): void {
    deps.logger.error({ err: { name: (err as Error)?.name, message: (err as Error)?.message } }, 'unhandled error');
  }

  /** Every /api path and every path that is not a system route gets the API's routing and error model. */
  function isSystemPath(url: string | undefined): boolean {
    if (!url || url.startsWith('/api/')) return false;
    // Absolute-form targets (RFC 9112 §3.2.2, `GET http://host/healthz`) reach the system routes too.
    return systemPaths.has(splitTarget(url).path);
  }

  return {
    callback(): RequestListener {
      return (req: IncomingMessage, res: ServerResponse) => {
        if (isSystemPath(req.url)) return koaListener(req, res);
        dispatch(req, res).catch((err: unknown) => {
          logUnhandled(err);
          if (!res.headersSent) writeError(res, '', new ApiError(500, 'INTERNAL_ERROR', 'internal server error'));
          else res.destroy();
        });
      };
    },
  };
}

function writeError(res: ServerResponse, path: string, err: ApiError): void {
  const requestId = randomUUID();
  const reply = errorReply(err, path, requestId);
  const headers: Record<string, string | number> = { 'x-request-id': requestId };
  addHeaders(headers, reply.headers);
  sendJson(res, res.req?.method ?? 'GET', reply.status, reply.body, headers);
}
