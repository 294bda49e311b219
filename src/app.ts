// createApp(deps): the Koa application — error safety net, API dispatch, non-API routes, 404 for the rest. No listen.
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { createDispatch, type DispatchDeps } from './http/dispatch.js';
import { toErrorInfo, ApiError } from './http/errors.js';
import { createSystemRoutes, type SystemRoutesDeps } from './http/system-routes.js';

export type AppDeps = DispatchDeps & SystemRoutesDeps;

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const dispatch = createDispatch(deps);
  const system = createSystemRoutes(deps);
  const systemPaths = new Set(system.stack.map((layer) => layer.path));
  const systemRoutes = system.routes() as unknown as Koa.Middleware;

  // Last-resort net: whatever escapes still answers ErrorInfo, without internals.
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      deps.logger.error({ err: { name: (err as Error)?.name, message: (err as Error)?.message } }, 'unhandled error');
      writeError(ctx, new ApiError(500, 'INTERNAL_ERROR', 'internal server error'));
    }
  });

  app.use(async (ctx, next) => {
    // Every /api path and every unknown path gets the API's routing and error model.
    if (ctx.path.startsWith('/api/') || !systemPaths.has(ctx.path)) return dispatch(ctx);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      const allow = 'GET, HEAD';
      return writeError(ctx, new ApiError(405, 'METHOD_NOT_ALLOWED', `method ${ctx.method} is not allowed on this path`, { headers: { Allow: allow } }));
    }
    return systemRoutes(ctx, next);
  });
  return app;
}

function writeError(ctx: Koa.Context, err: ApiError): void {
  const requestId = randomUUID();
  ctx.status = err.status;
  ctx.set('X-Request-Id', requestId);
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(toErrorInfo(err, ctx.path, requestId));
}
