// What the pipeline keeps per request on Koa's ctx.state: the request id and the fields of the access log.

export interface ApiState {
  requestId: string;
  operationId: string;
  /** The route template from openapi.yaml, null when no route matched. */
  route: string | null;
  keyId: string | null;
  /** The request's trace id while tracing is on (src/http/server-spans.ts), for the access log. */
  traceId?: string;
  /** RateLimit-* and X-Quota-* of a counted request, sent with its answer whatever it is. */
  limitHeaders?: Readonly<Record<string, string>>;
  /**
   * The JSON reader took the body whole from Node's buffer (json-body-fast/) before Node marked the request complete:
   * its connection needs no draining (src/app.ts). A field, not a WeakSet of requests: an entry per POST in a weak
   * collection cost the scavenger about 0.4 us per request (docs/adr/0041).
   */
  bodyReadWhole: boolean;
}
