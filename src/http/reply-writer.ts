// The one write step for JSON answers (RFC 9110): every header in one writeHead, field names in lower case, no body for HEAD.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Reply } from '../operations/types.js';
import { errorReply } from '../error-answers.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The one maker of request ids (X-Request-Id, ErrorInfo's requestId, the access log): a random UUID (RFC 9562 v4). */
export const newRequestId = (): string => randomUUID();

/** openapi.yaml (Errors): answers that carry results are not stored by caches, nor content-sniffed by browsers. */
const API_HEADERS: Readonly<Record<string, string>> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/**
 * Field names go out in lower case (RFC 9110 §5.1: case-insensitive; HTTP/2 requires it): Node lower-cases a copy of
 * every mixed-case name it checks. Remembered: the names come from this code (limiter, errors, handlers), never from clients.
 */
const wireNames = new Map<string, string>();
function wireName(name: string): string {
  let wire = wireNames.get(name);
  if (wire === undefined) {
    wire = name.toLowerCase();
    if (wireNames.size < 256) wireNames.set(name, wire);
  }
  return wire;
}

/** Copy header fields into `into` under their wire names. */
function addHeaders(into: Record<string, string | number>, from: Readonly<Record<string, string>> | undefined): void {
  for (const name in from) into[wireName(name)] = from[name];
}

/**
 * The header fields of an API answer whose JSON body is `payload`: the limiter's fields, the reply's own, the API's,
 * X-Request-Id (but on the 401, openapi.yaml Authentication), `Connection: close` when asked, the body's type and length.
 */
export function replyHeaders(
  reply: Reply,
  requestId: string,
  limitHeaders: Readonly<Record<string, string>> | undefined,
  close: boolean,
  payload: string | null,
): Record<string, string | number> {
  const headers: Record<string, string | number> = {};
  addHeaders(headers, limitHeaders);
  addHeaders(headers, reply.headers);
  addHeaders(headers, API_HEADERS);
  if (reply.status !== 401) headers['x-request-id'] = requestId;
  if (close) headers.connection = 'close';
  if (payload === null) {
    // Streamed: chunked transfer coding (RFC 9112 §7.1), its length unknown until the end.
    headers['content-type'] = reply.stream!.contentType;
    return headers;
  }
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = Buffer.byteLength(payload);
  return headers;
}

/**
 * Send an API answer as JSON in one writeHead (fields: replyHeaders), beside Koa's respond() (a Koa caller sets
 * ctx.respond = false): a ctx.set() per header cost a visible share of a light
 * request (docs/adr/0007). No body for HEAD.
 */
export function writeReply(
  res: ServerResponse,
  method: string | undefined,
  reply: Reply,
  requestId: string,
  limitHeaders?: Readonly<Record<string, string>>,
  close = false,
): void {
  if (reply.stream) return writeStream(res, method, reply, requestId, limitHeaders, close);
  const payload = JSON.stringify(reply.body);
  res.writeHead(reply.status, replyHeaders(reply, requestId, limitHeaders, close, payload));
  res.end(method === 'HEAD' ? undefined : payload);
}

/**
 * Answer a refusal made outside the API step (before the app, or on the metrics port) as the API answers one:
 * ErrorInfo for `error` at `path`, with a request id of its own.
 */
export function writeErrorReply(res: ServerResponse, method: string | undefined, error: unknown, path: string, close = false): void {
  const requestId = newRequestId();
  writeReply(res, method, errorReply(error, path, requestId), requestId, undefined, close);
}

/**
 * A streamed reply (Reply.stream): the headers at once, then each chunk as it is produced, waiting for the client to
 * take each (backpressure): a large answer is never held in memory. A failure once the headers are out can only cut
 * the answer short: the connection is destroyed, so the client sees an incomplete body rather than a short one.
 */
function writeStream(
  res: ServerResponse,
  method: string | undefined,
  reply: Reply,
  requestId: string,
  limitHeaders: Readonly<Record<string, string>> | undefined,
  close: boolean,
): void {
  res.writeHead(reply.status, replyHeaders(reply, requestId, limitHeaders, close, null));
  const chunks = reply.stream!.chunks;
  if (method === 'HEAD') {
    res.end();
    void chunks[Symbol.asyncIterator]().return?.();
    return;
  }
  pipeline(Readable.from(chunks, { objectMode: false }), res).catch(() => res.destroy());
}
