// A JSON request body (RFC 8259) that has wholly arrived, read and parsed at once: koa-body's answer for it without the
// stream's listeners, decoder and events (README.md: what it replaces, why, the figures, how equality is proven).
import type { IncomingMessage } from 'node:http';

/** The library versions the differential test (test/unit/json-body-fast.test.ts) was run against; pinned in package.json. */
export const VERIFIED_VERSIONS: Readonly<Record<string, string>> = Object.freeze({
  'koa-body': '8.0.1',
  'co-body': '6.2.0',
  'raw-body': '2.5.3',
  'iconv-lite': '0.4.24',
  '@hapi/bourne': '3.0.0',
});

/** koa-body's `parsedMethods` in json-body.ts: a body sent with any other method is not read. */
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * The media types read here, which type-is surely admits as JSON; any other (other parameters, a suffix type, tabs)
 * goes to koa-body, whose type check would otherwise have to be repeated exactly.
 */
const PLAIN_JSON = /^application\/json(?:; *charset=(?:utf-8|"utf-8"))?$/i;
/** co-body's strict mode: after JSON whitespace (RFC 8259 §2), an object or an array. */
const OBJECT_OR_ARRAY = /^[\x20\x09\x0a\x0d]*[[{]/;
/** Text that may name a `__proto__` member (literally or with \u escapes): only then is the parsed value scanned. */
const MAY_NAME_PROTO = /__proto__|\\u/;
const BOM = 0xfeff;

/** The body's text as decoded (invalid bytes replaced by U+FFFD, a leading BOM dropped) and its parsed value. */
export interface ArrivedJson {
  parsed: unknown;
  raw: string;
}

/**
 * The JSON body when every byte of it has arrived unread (`req.complete`, or the declared Content-Length in the
 * request's buffer: Node marks a request complete only after our handler ran on the bytes of the same packet),
 * without a content coding, as application/json: read whole and parsed now (an answer, or a refusal other than the
 * 413, means the body was read whole), with koa-body's answer (co-body's strict mode, raw-body's
 * limit, iconv-lite's UTF-8 decoding, bourne's `__proto__` refusal). Undefined when the library must read it
 * (compressed, still arriving, another media type or method). Its refusals have the library's shapes, so json-body.ts
 * maps both alike: a 413 `status` over `limit` bytes, a SyntaxError naming "object and array" for another JSON text,
 * another SyntaxError.
 */
export function readArrivedJson(req: IncomingMessage, limit: number): ArrivedJson | undefined {
  const headers = req.headers;
  const declared = headers['content-length'];
  const arrived = req.complete || (declared !== undefined && req.readableLength === Number(declared));
  if (!arrived || req.readableDidRead || !PARSED_METHODS.has(req.method ?? '')) return undefined;
  const coding = headers['content-encoding'];
  if ((coding !== undefined && coding !== 'identity') || !PLAIN_JSON.test(headers['content-type'] ?? '')) return undefined;
  // A chunked body has no declared length to refuse beforehand: raw-body counts what arrives.
  if (req.readableLength > limit) throw Object.assign(new Error('request entity too large'), { status: 413 });
  const bytes = req.readableLength === 0 ? null : (req.read() as Buffer | null);
  let raw = bytes === null ? '' : bytes.toString('utf8');
  if (raw.charCodeAt(0) === BOM) raw = raw.slice(1);
  return { parsed: parseStrict(raw), raw };
}

function parseStrict(text: string): unknown {
  // An empty text (a chunked body of no bytes, or a BOM alone) is an empty object in co-body's strict mode.
  if (text === '') return {};
  if (!OBJECT_OR_ARRAY.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
  const value = JSON.parse(text) as unknown;
  if (MAY_NAME_PROTO.test(text) && namesProto(value)) throw new SyntaxError('Object contains forbidden prototype property');
  return value;
}

/** Whether an object anywhere in the parsed value has its own `__proto__` member (a prototype-poisoning attempt). */
function namesProto(value: unknown): boolean {
  // A list, not recursion: 16 KiB of '[' nest 16,000 deep.
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Object.hasOwn(node, '__proto__')) return true;
    for (const member of Object.values(node)) if (member !== null && typeof member === 'object') pending.push(member);
  }
  return false;
}
