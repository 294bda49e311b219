// Request dispatch: route -> auth -> limits -> body -> validation -> handler -> one write step (openapi-backend's hook order).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeyDirectory } from '../accounts/key-directory.js';
import { readJsonBody } from './body.js';
import { ApiError, asApiError, errorReply, type ErrorPhase } from './errors.js';
import type { Limiter } from './limits.js';
import { accessLogger, type Logger } from './logging.js';
import type { Metrics } from './metrics.js';
import { validationError, type CompiledApi } from './request-validation.js';
import { RouteTable } from './route-table.js';
import { addHeaders, sendJson } from './send-json.js';
import type { ApiRequest, HandlerMap, Reply } from './types.js';
import { UNCOUNTED_OPERATIONS } from '../operations/usage.js';

export interface ResponseCheck {
  /** Returns a description of the mismatch, or null when the response honours the contract. */
  check(operationId: string, status: number, body: unknown): string | null;
}

export interface DispatchDeps {
  api: CompiledApi;
  handlers: HandlerMap;
  keys: KeyDirectory;
  limiter: Limiter;
  logger: Logger;
  metrics: Metrics;
  /** True once shutdown has begun: new requests get 503. */
  draining: () => boolean;
  /** VALIDATE_RESPONSES=true: check every response against openapi.yaml (off the hot path otherwise). */
  responseCheck?: ResponseCheck;
}

/** Path and query of a request target: origin-form split by hand, anything else through the WHATWG parser. */
export function splitTarget(url: string): { path: string; querystring: string } {
  if (url.charCodeAt(0) === 47 /* / */) {
    const q = url.indexOf('?');
    return q < 0 ? { path: url, querystring: '' } : { path: url.slice(0, q), querystring: url.slice(q + 1) };
  }
  try {
    const u = new URL(url, 'http://target.invalid');
    return { path: u.pathname, querystring: u.search.slice(1) };
  } catch {
    return { path: url, querystring: '' };
  }
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

interface Outcome {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export function createDispatch(deps: DispatchDeps) {
  const routes = new RouteTable(deps.api.operations);
  for (const op of deps.api.operations) {
    if (!deps.handlers[op.operationId]) throw new Error(`no handler for operation ${op.operationId}`);
  }
  const { logger, metrics, keys, limiter, handlers, responseCheck } = deps;
  const access = accessLogger(logger);

  /** Straight on node's request and response: Koa's context costs a tenth of a light request (bodies too: see body.ts). */
  return async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = randomUUID();
    const method = req.method ?? 'GET';
    const { path, querystring } = splitTarget(req.url ?? '/');
    let operationId = 'unmatched';
    let route: string | null = null;
    let keyId: string | null = null;
    let phase: ErrorPhase = 'routing';
    let outcome: Outcome;
    let limitHeaders: Readonly<Record<string, string>> = NO_HEADERS;
    try {
      if (deps.draining()) throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'server is shutting down', { headers: { 'Retry-After': '5' } });
      const match = routes.match(method, path);
      if (match.kind === 'not-found') throw new ApiError(404, 'RESOURCE_NOT_FOUND', 'no endpoint at this path');
      if (match.kind === 'method-not-allowed') {
        throw new ApiError(405, 'METHOD_NOT_ALLOWED', `method ${method} is not allowed on this path`, {
          headers: { Allow: match.allow },
        });
      }
      const { op, params } = match;
      operationId = op.operationId;
      route = op.template;

      phase = 'auth';
      const key = await keys.authenticate(req.headers['x-api-key']);
      keyId = key.id;

      phase = 'limits';
      if (!UNCOUNTED_OPERATIONS.has(operationId)) limitHeaders = (await limiter.consume(key)).headers;

      phase = 'request-validation';
      const query = op.queryParams.length ? readQuery(querystring, op.queryParams) : {};
      const validators = deps.api.validators.get(operationId)!;
      const body = op.hasBody ? await readJsonBody(req) : undefined;
      if (validators.body && !validators.body({ requestBody: body })) throw validationError(validators.body.errors!);
      if (!validators.params({ path: params, query, header: {}, cookie: {} })) throw validationError(validators.params.errors!);

      phase = 'handler';
      const request: ApiRequest = { params, query, body, headers: req.headers, ip: req.socket.remoteAddress ?? '', requestId, path, key };
      const reply: Reply = await handlers[operationId](request);
      outcome = { status: reply.status, body: reply.body, headers: reply.headers ?? {} };

      if (responseCheck) {
        phase = 'response-validation';
        const problem = responseCheck.check(operationId, outcome.status, outcome.body);
        if (problem) throw new Error(`response does not honour the contract: ${problem}`);
      }
    } catch (err) {
      outcome = errorReply(err, path, requestId);
      if (asApiError(err) === null) {
        logger.error({ requestId, operationId, phase, err: describe(err) }, 'unexpected error');
      }
    }

    const headers: Record<string, string | number> = {};
    addHeaders(headers, limitHeaders);
    addHeaders(headers, outcome.headers);
    if (outcome.status !== 401) headers['x-request-id'] = requestId;
    sendJson(res, method, outcome.status, outcome.body, headers);

    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics.observe(operationId, outcome.status, seconds);
    access.write({
      requestId,
      method,
      route,
      operationId,
      status: outcome.status,
      durationMs: Math.round(seconds * 1e6) / 1e3,
      keyId,
    });
  };
}

/** Name and message only: a stack or an object dump could carry request data. */
function describe(err: unknown): { name: string; message: string } {
  return err instanceof Error ? { name: err.name, message: err.message } : { name: typeof err, message: 'non-error thrown' };
}

/** Parse only the declared query parameters; a repeated one is malformed rather than silently picked. */
function readQuery(querystring: string, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!querystring) return out;
  const search = new URLSearchParams(querystring);
  for (const name of names) {
    const values = search.getAll(name);
    if (values.length > 1) {
      throw new ApiError(400, 'INVALID_FORMAT', `parameter ${name} is malformed: must be given once`, {
        details: [{ field: name, message: 'must be given once' }],
      });
    }
    if (values.length === 1) out[name] = values[0];
  }
  return out;
}
