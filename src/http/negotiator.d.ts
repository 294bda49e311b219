// Types for negotiator 1.1.0 (exact-pinned: RFC 9110 §12.5.3 content negotiation, the library Koa's own
// ctx.acceptsEncodings is built on), declared for the one call GET /docs makes: @types/negotiator lacks `preferred`.

declare module 'negotiator' {
  export default class Negotiator {
    constructor(request: { headers: Record<string, string | string[] | undefined> });
    /** The available encoding of highest weight; `preferred` (ours) breaks a tie in weight, else the client's order. */
    encoding(available: readonly string[], options?: { preferred?: readonly string[] }): string | undefined;
  }
}
