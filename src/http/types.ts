// Handler contract: an operation receives a validated request and returns {status, body}; one step writes it.
import type { IncomingHttpHeaders } from 'node:http';
import type { operations } from '../../generated/api.js';
import type { KeyRecord } from '../adapters/key-store.js';

export interface ApiRequest<P = Record<string, string>, Q = Record<string, string | undefined>, B = unknown> {
  params: P;
  query: Q;
  body: B;
  headers: IncomingHttpHeaders;
  /** The peer address of the connection (TRUST_PROXY's X-Forwarded-For is read in operations/tls-ip.ts). */
  ip: string;
  requestId: string;
  path: string;
  /** The authenticated key (its id and limits; never the key itself). */
  key?: KeyRecord;
}

export interface Reply<S extends number = number, B = unknown> {
  status: S;
  body: B;
  headers?: Record<string, string>;
}

/** Handlers throw ApiError (src/http/errors.ts) for every client-facing failure. */
export type Handler<Req extends ApiRequest<any, any, any> = ApiRequest<any, any, any>, R extends Reply = Reply> = (
  req: Req,
) => Promise<R> | R;

export type HandlerMap = Record<string, Handler>;


export type OperationId = keyof operations;

/** The 200 body of an operation, as generated from openapi.yaml. */
export type SuccessBody<Op extends OperationId> = operations[Op]['responses'] extends { 200: { content: { 'application/json': infer B } } }
  ? B
  : never;

/** Path parameters of an operation, as generated from openapi.yaml. */
export type PathParams<Op extends OperationId> = operations[Op]['parameters'] extends { path: infer P }
  ? [P] extends [never]
    ? Record<string, never>
    : P
  : Record<string, never>;

/** Query parameters of an operation (absent ones undefined). */
export type QueryParams<Op extends OperationId> = operations[Op]['parameters'] extends { query?: infer Q }
  ? [NonNullable<Q>] extends [never]
    ? Record<string, never>
    : Partial<NonNullable<Q>>
  : Record<string, never>;

/** A handler typed per operation: its request params and its 200 reply come from the contract. */
export type OperationHandler<Op extends OperationId> = Handler<ApiRequest<PathParams<Op>, QueryParams<Op>, unknown>, Reply<200, SuccessBody<Op>>>;
