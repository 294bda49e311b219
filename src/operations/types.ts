// Handler contract (openapi-backend's handler signature): an operation gets the validated request and RETURNS {status, body}.
import type { IncomingHttpHeaders } from 'node:http';
import type { operations } from '../../generated/api.js';
import type { KeyRecord } from '../adapters/keys/key-store.js';

/** Operations of openapi.yaml's System tag: served by @koa/router (http/system-routes.ts), never by a handler here. */
type SystemOperationId = 'getHealth' | 'getReadiness' | 'getMetrics' | 'getOpenApiJson' | 'getOpenApiYaml' | 'getDocs';

/** The API operations: every operationId of openapi.yaml outside the System tag. */
export type OperationId = Exclude<keyof operations, SystemOperationId>;

export interface Reply<S extends number = number, B = unknown> {
  status: S;
  body: B;
  headers?: Record<string, string>;
  /** A body sent as it is produced (reply-writer.ts): `body` is then null, or for JSON text the object it writes. */
  stream?: StreamedBody;
}

/** A streamed answer (openapi.yaml getEmailJobResults): its media type and its text, chunk by chunk. */
interface StreamedBody {
  contentType: string;
  chunks: AsyncIterable<string>;
}

type Responses<Op extends OperationId> = operations[Op]['responses'];

/** The success body of an operation (its 200, else its 202 JSON), as generated from openapi.yaml; null when streamed. */
export type SuccessBody<Op extends OperationId> = Responses<Op> extends { 200: { content: { 'application/json': infer B } } }
  ? B
  : Responses<Op> extends { 202: { content: { 'application/json': infer B } } }
    ? B
    : null;

/** The success status of an operation: 202 for one that only accepts work (createEmailJob), else 200. */
type SuccessStatus<Op extends OperationId> = Responses<Op> extends { 202: unknown } ? 202 : 200;

/** Path parameters of an operation, as generated from openapi.yaml. */
type PathParams<Op extends OperationId> = operations[Op]['parameters'] extends { path: infer P }
  ? [P] extends [never]
    ? Record<string, never>
    : P
  : Record<string, never>;

/** Query parameters of an operation, as generated: the validator guarantees the required ones (optional ones may be undefined). */
type QueryParams<Op extends OperationId> = operations[Op]['parameters'] extends { query?: infer Q }
  ? [NonNullable<Q>] extends [never]
    ? Record<string, never>
    : NonNullable<Q>
  : Record<string, never>;

/** The JSON request body of an operation, as validated against openapi.yaml. */
type RequestBody<Op extends OperationId> = operations[Op] extends { requestBody: { content: { 'application/json': infer B } } } ? B : undefined;

/** The parsed request an operation sees (openapi-backend's ParsedRequest, narrowed per operation). */
export interface OperationRequest<Op extends OperationId> {
  params: PathParams<Op>;
  query: QueryParams<Op>;
  requestBody: RequestBody<Op>;
  headers: IncomingHttpHeaders;
  /** The peer address of the connection (TRUST_PROXY's X-Forwarded-For is read by the IP operation). */
  ip: string;
}

/** openapi-backend's Context as an operation uses it: the request, and the key the ApiKey security handler returned. */
export interface OperationContext<Op extends OperationId> {
  request: OperationRequest<Op>;
  security?: { ApiKey?: KeyRecord | unknown };
}

/** An operation handler, `(context, ctx)` as openapi-backend calls it; its 200 reply typed from the contract. */
export type OperationHandler<Op extends OperationId> = (
  context: OperationContext<Op>,
  ...koa: unknown[]
) => Reply<SuccessStatus<Op>, SuccessBody<Op>> | Promise<Reply<SuccessStatus<Op>, SuccessBody<Op>>>;

/** One handler per operationId of openapi.yaml: `satisfies Handlers` makes a missing one a compile error. */
export type Handlers = { [Op in OperationId]: OperationHandler<Op> };

/** The authenticated key of a request, put there by the ApiKey security handler. */
export function keyOf(context: { security?: { ApiKey?: unknown } }): KeyRecord {
  const key = context.security?.ApiKey;
  if (!key || typeof key !== 'object') throw new Error('operation reached without an authenticated key');
  return key as KeyRecord;
}
