// What the pipeline keeps per request on Koa's ctx.state: the request id, the error phase and the fields of the access log.
import type { ErrorPhase } from '../errors.js';

export interface ApiState {
  requestId: string;
  /** Where in the request's life an error arose; logged, never sent. */
  phase: ErrorPhase;
  operationId: string;
  /** The route template from openapi.yaml, null when no route matched. */
  route: string | null;
  keyId: string | null;
  /** RateLimit-* and X-Quota-* of a counted request, sent with its answer whatever it is. */
  limitHeaders?: Readonly<Record<string, string>>;
  /** The request handed to openapi-backend (its body is set once read). */
  request?: { body: unknown };
}
