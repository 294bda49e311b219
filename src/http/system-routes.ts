// Non-API routes (no key needed): the contract, the Redoc page, health, readiness, metrics (or its own port).
import Router from '@koa/router';
import Koa from 'koa';
import Negotiator from 'negotiator';
import type { DocsPage } from '../adapters/files/docs-page.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { writeErrorReply } from './reply-writer.js';
import type { Metrics } from './metrics.js';
import type { Spec } from './spec.js';

export interface SystemRoutesDeps {
  spec: Spec;
  metrics: Metrics;
  /** The Redoc page built from the same openapi.yaml (`make docs`), read at the first call; null when not built. */
  docsPage: () => DocsPage | null | Promise<DocsPage | null>;
  /** Named readiness checks; the service is ready when all are true. */
  readiness: () => Record<string, boolean>;
  /** What works but is degraded, by name, with why (the embedded store's writes failing): reported by /readyz, never making it fail. */
  degraded?: () => Record<string, string>;
  /** Each shipped dataset's date and state (adapters/files/datasets.ts); reported by /readyz, never making it fail. */
  datasets?: () => readonly object[];
  /** METRICS_PORT is set: /metrics is served there (createMetricsApp), not among these routes. */
  metricsOnOwnPort?: boolean;
}

const DOCS_CSP = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Our encodings, best first: br is the smaller. */
const OUR_ORDER = ['br', 'gzip'] as const;

/**
 * The encoding to send and its bytes among those made so far: the client's weights decide (RFC 9110 §12.5.3; q=0
 * refuses, `*` stands for the codings it does not name), and at equal weight ours does, not the order the client
 * happened to list them in (`gzip, deflate, br` gets br). Koa's ctx.acceptsEncodings breaks such a tie by the
 * client's order and shows no weights, so this asks negotiator (the library under it) with its `preferred` option.
 * No Accept-Encoding field, or nothing acceptable: the page as built.
 */
function pickEncoding(page: DocsPage, ctx: Koa.Context): { coding: string | null; body: Buffer } {
  const offered = OUR_ORDER.filter((e) => page[e] !== null);
  const coding = new Negotiator(ctx.req).encoding(offered, { preferred: OUR_ORDER });
  if (coding === 'br' && page.br) return { coding, body: page.br };
  if (coding === 'gzip' && page.gzip) return { coding, body: page.gzip };
  return { coding: null, body: page.identity };
}

export function createSystemRoutes(deps: SystemRoutesDeps): Router {
  const router = new Router();
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = deps.spec.json;
  });
  router.get('/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml';
    ctx.body = deps.spec.yaml;
  });
  router.get('/docs', async (ctx) => {
    const page = await deps.docsPage();
    // A failure like any other, written by the app's error middleware (the page does not appear by waiting: no Retry-After).
    if (page === null) throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'documentation page not built: run `make docs`');
    const { coding, body } = pickEncoding(page, ctx);
    ctx.type = 'text/html; charset=utf-8';
    // The page is self-contained: nothing may load from elsewhere (Redoc would fetch a logo from its CDN).
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.vary('Accept-Encoding');
    if (coding !== null) ctx.set('Content-Encoding', coding);
    // A Buffer body: Koa sets Content-Length, and a HEAD gets the headers alone.
    ctx.body = body;
  });
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', (ctx) => {
    const checks = deps.readiness();
    const ready = Object.values(checks).every(Boolean);
    ctx.status = ready ? 200 : 503;
    const degraded = deps.degraded?.() ?? {};
    ctx.body = {
      status: ready ? 'ready' : 'not ready',
      checks,
      ...(Object.keys(degraded).length > 0 ? { degraded } : {}),
      ...(deps.datasets ? { datasets: deps.datasets() } : {}),
    };
  });
  if (!deps.metricsOnOwnPort) router.get('/metrics', metricsRoute(deps.metrics));
  return router;
}

function metricsRoute(metrics: Metrics): Koa.Middleware {
  return async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.render();
  };
}

/** ErrorInfo with its request id, for the metrics port's own refusals: written as the API writes its answers. */
function answerError(ctx: Koa.Context, error: unknown): void {
  ctx.respond = false;
  writeErrorReply(ctx.res, ctx.method, error, ctx.path);
}

/** The server of METRICS_PORT: GET and HEAD /metrics, ErrorInfo 404 for any other path, 405 for other methods. */
export function createMetricsApp(metrics: Metrics): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const serve = metricsRoute(metrics);
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      answerError(ctx, err); // an unexpected failure: 500 INTERNAL_ERROR, no internals
    }
  });
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics') return answerError(ctx, new ApiError(404, 'RESOURCE_NOT_FOUND', 'only /metrics is served on this port'));
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      return answerError(ctx, methodNotAllowed(ctx.method, ['GET', 'HEAD']));
    }
    return serve(ctx, next);
  });
  return app;
}
