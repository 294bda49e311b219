// The API step: openapi-backend's handleRequest with every status decision in one of its named hooks (openapi.yaml).
import type { Context as KoaContext } from 'koa';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type AjvCustomizer, type Context, type Request } from 'openapi-backend';
import type { KeyDirectory } from '../accounts/key-directory.js';
import type { KeyRecord } from '../adapters/keys/key-store.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { errorReply, validationError } from '../error-answers.js';
import { BODY_LIMIT_BYTES, readJsonBody } from './json-body.js';
import { isCsvRequest, readCsvItems } from './csv-body.js';
import type { Limiter } from '../accounts/limits.js';
import { PrecompiledRouter } from './openapi-router.js';
import { RequestValidator } from './request-validator.js';
import type { ApiState } from './state.js';
import type { Handlers, Reply } from '../operations/types.js';
import { bulkSpecs, overItemLimit, unitsOf } from '../operations/bulk-items.js';

export interface ResponseCheck {
  /** Returns a description of the mismatch, or null when the response honours the contract. */
  check(operationId: string, status: number, body: unknown): string | null;
}

export interface ApiDeps {
  document: Record<string, any>;
  handlers: Handlers;
  keys: Pick<KeyDirectory, 'authenticate'>;
  limiter: Pick<Limiter, 'consume'>;
  /** BULK_MAX_ITEMS: most items in one bulk request (openapi.yaml `x-counted: items`); default 1000. */
  bulkMaxItems?: number;
  /** Operations whose body may be larger than 16 KiB, by operationId (createEmailJob: JOBS_MAX_ITEMS). */
  bodyLimits?: Readonly<Record<string, number>>;
  /** VALIDATE_RESPONSES=true: check every response against openapi.yaml (off the hot path otherwise). */
  responseCheck?: ResponseCheck;
  /** Keep openapi-backend's stock router: only for the benchmark row that shows what the precompiled one gains. */
  stockRouter?: boolean;
}

/** RFC 9110 §11.6.1: a 401 names how to authenticate; the API key is a header, named in openapi.yaml's ApiKey scheme. */
const WWW_AUTHENTICATE = 'ApiKey header="X-Api-Key"';

/**
 * The request handed to openapi-backend: method, path and headers read once (openapi-backend, the router and the
 * validator each ask again); Koa's parsed query only when the operation declares query parameters. It reads its own
 * JSON body, once, when the pipeline asks (after the key and the count): the validator and the handler see it
 * through `body` (the router's parsed view reads it from here).
 */
class KoaRequest implements Request {
  readonly method: string;
  readonly path: string;
  readonly headers: Request['headers'];
  private read: Promise<unknown> | undefined;
  private value: unknown = undefined;
  constructor(private readonly ctx: KoaContext) {
    const method = ctx.method;
    // HEAD is GET without a body (RFC 9110 §9.3.2): Koa leaves the body out.
    this.method = method === 'HEAD' ? 'GET' : method;
    this.path = ctx.path;
    this.headers = ctx.req.headers as Request['headers'];
  }
  get query(): Record<string, string | string[]> {
    return this.ctx.query as Record<string, string | string[]>;
  }
  get ip(): string {
    return this.ctx.req.socket.remoteAddress ?? '';
  }
  get body(): unknown {
    return this.value;
  }
  /**
   * Read and parse the JSON body (readJsonBody's refusals), once: a second call answers as the first did. An
   * operation that takes text/csv too (`csvColumn`) reads a CSV body as `{ items }` (csv-body.ts).
   */
  readBody(limit?: number, csvColumn?: string): Promise<unknown> {
    const csv = csvColumn !== undefined && isCsvRequest(this.ctx);
    this.read ??= (csv ? readCsvItems(this.ctx, limit ?? BODY_LIMIT_BYTES, csvColumn) : readJsonBody(this.ctx, limit)).then((value) => (this.value = value));
    return this.read;
  }
}

/** A refusal settles as `{ error }` (see the ApiKey handler below). */
const asRefusal = (error: unknown) => ({ error });

/** Operations marked `x-counted: false` in openapi.yaml are not counted against the key's limits (GET /api/v1/usage). */
export function uncountedOperations(document: Record<string, any>): Set<string> {
  const out = new Set<string>();
  for (const item of Object.values<any>(document.paths ?? {})) {
    for (const op of Object.values<any>(item)) if (op?.operationId && op['x-counted'] === false) out.add(op.operationId);
  }
  return out;
}

/**
 * The document without the operations of the System tag (/healthz, /metrics, /openapi.json...): openapi.yaml describes
 * them, but @koa/router serves them (system-routes.ts); they are never API operations.
 */
export function apiDocument(document: Record<string, any>): Record<string, any> {
  const copy = structuredClone(document);
  for (const [path, item] of Object.entries<any>(copy.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) if (op?.tags?.includes('System')) delete item[method];
    if (!Object.values<any>(item).some((op) => op?.operationId)) delete copy.paths[path];
  }
  return copy;
}

/** The operations that take a text/csv body too, and the column their `items` come from (openapi.yaml `x-csv-column`). */
function csvColumns(document: Record<string, any>): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of Object.values<any>(document.paths ?? {})) {
    for (const op of Object.values<any>(item)) {
      const csv = op?.requestBody?.content?.['text/csv'];
      if (op?.operationId && csv) out.set(op.operationId, String(csv['x-csv-column'] ?? 'email').toLowerCase());
    }
  }
  return out;
}

/** The Ajv options of every request validator (the stock one and RequestValidator alike). */
export const VALIDATION_OPTIONS = {
  // Errors carry their schema, so a refusal can use the contract's own wording (x-invalid-message, openapi.yaml).
  // validateSchema: false: openapi-backend makes one Ajv per validator, and each would compile the meta-schema
  // again to check the schema, the largest cost of building the app (docs/adr/0012-keys-on-demand.md);
  // test/unit/request-schemas.test.ts makes that check instead.
  ajvOpts: { verbose: true, validateSchema: false },
  customizeAjv: ((ajv) => {
    addFormats.default(ajv as any);
    return ajv;
  }) as AjvCustomizer,
};

/**
 * openapi-backend in quick mode: its definition check uses the OpenAPI 3.0 meta-schema and would reject 3.1 (redocly
 * lint checks the document instead). Its Ajv is draft-07 without ajv-formats: the formats are added here.
 */
async function createBackend(document: Record<string, any>, stockRouter = false): Promise<{ api: OpenAPIBackend; router: PrecompiledRouter }> {
  const api = new OpenAPIBackend({ definition: apiDocument(document) as any, quick: true, strict: true, ...VALIDATION_OPTIONS });
  await api.init();
  const router = new PrecompiledRouter({ definition: api.definition });
  if (!stockRouter) {
    api.router = router;
    // Quick mode builds its validator lazily (nothing compiled yet): ours takes its place, with the same options.
    api.validator = new RequestValidator({ definition: api.definition, router, lazyCompileValidators: true, ...VALIDATION_OPTIONS });
  }
  // Quick mode compiles a validator on an operation's first request (about a second each on a busy host): at start instead.
  for (const op of api.getOperations()) api.validator.getRequestValidatorsForOperation(op.operationId!);
  return { api, router };
}

/** The answer to a refused key (401 with WWW-Authenticate, or the 403 the key directory gave). */
function unauthorizedHandler(c: Context, ctx: KoaContext): Reply {
  const err = (c.security?.ApiKey as { error?: unknown } | undefined)?.error;
  const refusal =
    err instanceof ApiError && err.status === 401
      ? new ApiError(401, err.code, err.message, { details: err.details, headers: { ...err.headers, 'WWW-Authenticate': WWW_AUTHENTICATE } })
      : (err ?? new ApiError(401, 'UNAUTHORIZED', 'the X-Api-Key header is missing', { headers: { 'WWW-Authenticate': WWW_AUTHENTICATE } }));
  // Anything but an ApiError is a fault: the error middleware logs it and answers 500.
  if (!(refusal instanceof ApiError)) throw refusal;
  return errorReply(refusal, ctx.path, (ctx.state as ApiState).requestId);
}

/**
 * The API step: the backend above with the service's hooks and handlers. A request goes through them top to bottom,
 * each step deciding its own statuses: route (404, 405), authenticate (401, 403), count (429),
 * read the body (400, 413), validate (400), handle, check the reply (VALIDATE_RESPONSES). Each hook and handler is
 * called as (context, ctx, request): openapi-backend's context, Koa's, and the KoaRequest it was given.
 */
export async function createApi(deps: ApiDeps): Promise<{ handle: (ctx: KoaContext) => Promise<Reply>; api: OpenAPIBackend }> {
  const { api, router } = await createBackend(deps.document, deps.stockRouter);
  const uncounted = uncountedOperations(deps.document);
  const bulkMax = deps.bulkMaxItems ?? 1000;
  const bulk = bulkSpecs(deps.document, bulkMax);
  const csv = csvColumns(deps.document);
  const state = (ctx: KoaContext) => ctx.state as ApiState;

  api.register({
    notFound: () => {
      throw new ApiError(404, 'RESOURCE_NOT_FOUND', 'no endpoint at this path');
    },
    methodNotAllowed: (_c: Context, ctx: KoaContext) => {
      throw methodNotAllowed(ctx.method, router.allowedMethods(ctx.path));
    },
  });

  /**
   * A refusal (401/403) settles as `{ error }`, which openapi-backend counts as failed authentication, and
   * unauthorizedHandler returns its answer: a flood of unknown keys is refused without a rejected promise at every
   * async frame up to the error middleware.
   */
  api.registerSecurityHandler('ApiKey', (c: Context) => deps.keys.authenticate(c.request.headers['x-api-key']).then(undefined, asRefusal));

  api.register({
    unauthorizedHandler,
    /**
     * Count, then read the body: after authentication and before validation, so a malformed request of a known key
     * counts. Every matched operation passes here, whatever its security handlers decided; the operation and key are
     * noted for the access log and the metrics here. A bulk request counts one unit per item (openapi.yaml
     * `x-counted: items`), so its body is read first; one that cannot be read or is over BULK_MAX_ITEMS counts one.
     */
    postSecurityHandler: async (c: Context, ctx: KoaContext, request: KoaRequest) => {
      const operationId = c.operation.operationId!;
      const log = state(ctx);
      log.operationId = operationId;
      log.route = c.operation.path;
      if (!c.security?.authorized) return; // unauthorizedHandler answers
      const key = c.security.ApiKey as KeyRecord;
      log.keyId = key.id;
      const many = bulk.get(operationId);
      const items = many ? await request.readBody(many.bodyLimit).then((body) => unitsOf(body, bulkMax), () => 1) : 1;
      if (!uncounted.has(operationId)) log.limitHeaders = (await deps.limiter.consume(key, items)).headers;
      if (!c.operation.requestBody) return;
      const body = await request.readBody(deps.bodyLimits?.[operationId], csv.get(operationId));
      if (many) {
        const over = overItemLimit(body, bulkMax);
        if (over) throw over;
      }
    },
    validationFail: (c: Context) => {
      throw validationError(c.validation.errors ?? []);
    },
    ...(deps.handlers as unknown as Record<string, (c: Context, ctx: KoaContext) => unknown>),
  });
  // Registered only when it decides something (VALIDATE_RESPONSES), like every hook here (docs/adr/0010).
  const { responseCheck } = deps;
  if (responseCheck) {
    api.register('postResponseHandler', (c: Context): Reply => {
      const reply = c.response as Reply;
      if (reply.stream && reply.body === null) return reply; // not JSON: its lines are checked by the operation's tests
      const problem = responseCheck.check(c.operation.operationId!, reply.status, reply.body);
      if (problem) throw new Error(`response does not honour the contract: ${problem}`);
      return reply;
    });
  }

  /** One API request through openapi-backend; the error middleware awaits the reply and writes it. */
  const handle = (ctx: KoaContext): Promise<Reply> => {
    const request = new KoaRequest(ctx);
    return api.handleRequest(request, ctx, request) as Promise<Reply>;
  };
  return { handle, api };
}
