// JSON request bodies (RFC 8259) through koa-body: 16 KiB at most (decoded), JSON only, UTF-8 only, optionally
// compressed (RFC 9110 §8.4.1: gzip, deflate, br); refusals never echo the body.
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { ApiError } from '../errors.js';
import { readArrivedJson, type ArrivedJson } from './json-body-fast/index.js';
import type { ApiState } from './state.js';

export const BODY_LIMIT_BYTES = 16 * 1024;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
/** A charset parameter naming anything but UTF-8 (or its ASCII subset): RFC 8259 §8.1 has JSON in UTF-8 only. */
const OTHER_CHARSET = /;\s*charset\s*=\s*(?!"?(?:utf-?8|us-ascii)"?\s*(?:;|$))/i;
/** What the UTF-8 decoder puts in place of invalid bytes; a client that means it sends the escape \ufffd. */
const REPLACEMENT = '\uFFFD';
/** The content codings koa-body's inflater decodes, by their RFC 9110 names; x-gzip is gzip (§8.4.1.3). */
const CODINGS: ReadonlyMap<string, string> = new Map([['identity', 'identity'], ['gzip', 'gzip'], ['x-gzip', 'gzip'], ['deflate', 'deflate'], ['br', 'br']]);

/** koa-body's refusals (raw-body's 413, zlib's stream errors, JSON errors) as the ErrorInfo answers of openapi.yaml. */
function refusal(err: Error, ctx: Context, limit: number): never {
  const status = (err as { status?: number }).status;
  if (status === 413) throw tooLarge(limit);
  const coding = ctx.get('content-encoding') || 'identity';
  // zlib's stream errors (Z_DATA_ERROR, Z_BUF_ERROR...) carry a numeric errno; JSON and read errors do not.
  if (coding !== 'identity' && typeof (err as { errno?: unknown }).errno === 'number') {
    throw badBody('request body could not be decompressed', `is not valid ${coding} data`);
  }
  // Strict mode refuses JSON texts that are not an object or array (a bare string, number, null).
  if (/only supports object and array/.test(err.message)) throw badBody('request body must be a JSON object', 'must be a JSON object');
  throw badBody('request body is not valid JSON', 'is not valid JSON');
}

const parser = (limit: number) => koaBody({
  json: true,
  urlencoded: false,
  text: false,
  multipart: false,
  jsonStrict: true,
  jsonLimit: limit,
  // Any application/*+json type (JSON_TYPE has already admitted the request).
  jsonTypes: ['application/json', '+json'],
  parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
  // The decoded text beside the parsed value: to see whether decoding replaced invalid bytes (dropped right after).
  includeUnparsed: true,
  onError: (err, ctx) => refusal(err, ctx, limit),
});

/** One parser per limit: BODY_LIMIT_BYTES, and the bulk operations' larger one (openapi.yaml, Bulk validation). */
const parsers = new Map<number, ReturnType<typeof parser>>();

/** The declared Content-Length as a number (Node has checked its digits); NaN when absent. Never cut to 32 bits. */
export function declaredLength(ctx: Context): number {
  const value = ctx.req.headers['content-length'];
  return value === undefined || value === '' ? NaN : Number(value);
}

/**
 * Parse the request body as JSON; throws ApiError 400 (not JSON, not UTF-8, bad coding) or 413 (over `limit` bytes,
 * BODY_LIMIT_BYTES unless the operation allows more).
 */
export async function readJsonBody(ctx: Context, limit = BODY_LIMIT_BYTES): Promise<unknown> {
  const headers = ctx.req.headers;
  const length = declaredLength(ctx);
  if (length > limit) throw tooLarge(limit);
  // An empty body is an empty object: the validator then names the missing field.
  if (!length && !headers['transfer-encoding']) return {};
  const type = headers['content-type'] ?? '';
  if (!JSON_TYPE.test(type)) {
    throw badBody('request body must be JSON sent with Content-Type: application/json', 'content type must be application/json');
  }
  if (OTHER_CHARSET.test(type)) throw notUtf8('charset must be utf-8');
  canonicalCoding(ctx);
  const { parsed, raw } = readArrived(ctx, limit) ?? (await readThroughKoaBody(ctx, limit));
  // A Latin-1 password decoded with replacements would be checked as another password: refuse rather than guess.
  if (raw?.includes(REPLACEMENT)) throw notUtf8('contains bytes that are not UTF-8 (or a raw U+FFFD: send it as \\ufffd)');
  return parsed;
}

/** A body that has wholly arrived, uncompressed, read at once by the fork of koa-body's reading (json-body-fast/). */
function readArrived(ctx: Context, limit: number): Partial<ArrivedJson> | undefined {
  try {
    const read = readArrivedJson(ctx.req, limit);
    if (read !== undefined) (ctx.state as ApiState).bodyReadWhole = true;
    return read;
  } catch (err) {
    // A JSON error comes after the whole body was read; a 413 reads nothing (the connection is closed after it).
    if ((err as { status?: number }).status !== 413) (ctx.state as ApiState).bodyReadWhole = true;
    return refusal(err as Error, ctx, limit);
  }
}

/** Any other body through koa-body: what it parsed (nothing when its own type check declined) and the decoded text. */
async function readThroughKoaBody(ctx: Context, limit: number): Promise<Partial<ArrivedJson>> {
  let parse = parsers.get(limit);
  if (parse === undefined) parsers.set(limit, (parse = parser(limit)));
  await parse(ctx, async () => {});
  const request = ctx.request as typeof ctx.request & { body?: unknown; rawBody?: string };
  const read = { parsed: request.body, raw: request.rawBody };
  request.rawBody = undefined;
  return read;
}

/** Refuse a Content-Encoding koa-body cannot decode; name the others as its inflater expects. */
export function canonicalCoding(ctx: Context): void {
  const headers = ctx.req.headers;
  const coding = headers['content-encoding'];
  if (coding === undefined) return;
  // Coding names are case-insensitive (RFC 9110 §8.4.1) and x-gzip is gzip; co-body hands the header to its inflater,
  // which matches the exact lower-case names only, so the header is set to the canonical name (a reach-in: docs/adr/0020).
  const known = CODINGS.get(coding.trim().toLowerCase());
  if (!known) throw badBody('request body has an unsupported Content-Encoding', 'Content-Encoding must be gzip, deflate, br or identity');
  headers['content-encoding'] = known;
}

/** 400 INVALID_FORMAT for the body as a whole; `detail` says what is wrong and never quotes the body. */
export function badBody(message: string, detail: string): ApiError {
  return new ApiError(400, 'INVALID_FORMAT', message, { details: [{ field: 'body', message: detail }] });
}

function notUtf8(detail: string): ApiError {
  return badBody('request body must be UTF-8 encoded JSON', detail);
}

/** 413: the rest of the body is not read (RFC 9110 §15.5.14); the pipeline closes the connection after answering. */
export function tooLarge(limit: number): ApiError {
  return new ApiError(413, 'VALIDATION_ERROR', `request body is larger than ${limit} bytes`, {
    details: [{ field: 'body', message: `must be at most ${limit} bytes` }],
  });
}
