// JSON request bodies (RFC 8259) through co-body, koa-body's JSON engine, straight on node's request: 16 KiB at most
// (decoded), JSON only, optionally compressed (RFC 9110 §8.4.1: gzip, deflate, br); parse errors never echo the body.
import type { IncomingMessage } from 'node:http';
import coBody from 'co-body';
import { ApiError } from './errors.js';

export const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * co-body's JSON parser (raw-body, inflation, bourne) on the node request: the API path has no Koa context, and making
 * one for koa-body (with its type-is checks) cost the card endpoint a sixth of its CPU per request (A/B, 20 rounds).
 * The media type is checked below (JSON_TYPE), so no type list is needed here. `returnRawBody`: the decoded text,
 * to see whether decoding replaced invalid bytes (dropped right after).
 */
const PARSE_OPTIONS: Readonly<coBody.Options> = Object.freeze({ limit: BODY_LIMIT_BYTES, strict: true, returnRawBody: true });

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
/** A charset parameter naming anything but UTF-8 (or its ASCII subset): RFC 8259 §8.1 has JSON in UTF-8 only. */
const OTHER_CHARSET = /;\s*charset\s*=\s*(?!"?(?:utf-?8|us-ascii)"?\s*(?:;|$))/i;
/** What the UTF-8 decoder puts in place of invalid bytes; a client that means it sends the escape \ufffd. */
const REPLACEMENT = '\uFFFD';
/** The content codings co-body's inflation decodes, by their RFC 9110 names; x-gzip is gzip (§8.4.1.3). */
const CODINGS: ReadonlyMap<string, string> = new Map([['identity', 'identity'], ['gzip', 'gzip'], ['x-gzip', 'gzip'], ['deflate', 'deflate'], ['br', 'br']]);

/** Parse the request body as JSON; throws ApiError 400 (not JSON) or 413 (too large). */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const headers = req.headers;
  const length = declaredLength(headers['content-length']);
  if (length !== undefined && length > BODY_LIMIT_BYTES) throw tooLarge();
  const type = headers['content-type'] ?? '';
  // An empty body is an empty object: the validator then names the missing field.
  if (!length && !headers['transfer-encoding']) return {};
  if (!JSON_TYPE.test(type)) {
    throw badBody('request body must be JSON sent with Content-Type: application/json', 'content type must be application/json');
  }
  if (OTHER_CHARSET.test(type)) throw notUtf8('charset must be utf-8');
  const coding = headers['content-encoding'];
  if (coding !== undefined) {
    // Coding names are case-insensitive; the inflater matches them exactly, so it gets the canonical name.
    const known = CODINGS.get(coding.trim().toLowerCase());
    if (!known) throw badBody('request body has an unsupported Content-Encoding', 'Content-Encoding must be gzip, deflate, br or identity');
    headers['content-encoding'] = known;
  }
  let read: { parsed: unknown; raw: string };
  try {
    read = (await coBody.json(req, PARSE_OPTIONS)) as { parsed: unknown; raw: string };
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 413) throw tooLarge();
    // zlib's stream errors (Z_DATA_ERROR, Z_BUF_ERROR...) carry a numeric errno; JSON and read errors do not.
    if ((headers['content-encoding'] ?? 'identity') !== 'identity' && typeof (err as { errno?: unknown }).errno === 'number') {
      throw badBody('request body could not be decompressed', `is not valid ${headers['content-encoding']} data`);
    }
    // co-body's strict mode refuses JSON texts that are not an object or array (a bare string, number, null).
    if (/only supports object and array/.test((err as Error).message)) {
      throw badBody('request body must be a JSON object', 'must be a JSON object');
    }
    throw badBody('request body is not valid JSON', 'is not valid JSON');
  }
  // A Latin-1 password decoded with replacements would be checked as another password: refuse rather than guess.
  if (read.raw.includes(REPLACEMENT)) throw notUtf8('contains bytes that are not UTF-8 (or a raw U+FFFD: send it as \\ufffd)');
  return read.parsed;
}

/** Content-Length as Koa's request.length reads it: undefined when absent, a number otherwise (Node has checked its digits). */
function declaredLength(value: string | undefined): number | undefined {
  return value === undefined || value === '' ? undefined : ~~value;
}

/** 400 INVALID_FORMAT for the body as a whole; `detail` says what is wrong and never quotes the body. */
function badBody(message: string, detail: string): ApiError {
  return new ApiError(400, 'INVALID_FORMAT', message, { details: [{ field: 'body', message: detail }] });
}

function notUtf8(detail: string): ApiError {
  return badBody('request body must be UTF-8 encoded JSON', detail);
}

/** 413, closing the connection: the rest of the body is not read (RFC 9110 §15.5.14), so it cannot carry another request. */
function tooLarge(): ApiError {
  return new ApiError(413, 'VALIDATION_ERROR', `request body is larger than ${BODY_LIMIT_BYTES} bytes`, {
    details: [{ field: 'body', message: `must be at most ${BODY_LIMIT_BYTES} bytes` }],
    headers: { Connection: 'close' },
  });
}
