// What the pipeline keeps per request on Koa's ctx.state: the request id and the fields of the access log.

export interface ApiState {
  requestId: string;
  operationId: string;
  /** The route template from openapi.yaml, null when no route matched. */
  route: string | null;
  keyId: string | null;
  /** RateLimit-* and X-Quota-* of a counted request, sent with its answer whatever it is. */
  limitHeaders?: Readonly<Record<string, string>>;
}
