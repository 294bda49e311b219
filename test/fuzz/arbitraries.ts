// fast-check arbitraries for hostile HTTP input: path segments, query strings, headers, JSON bodies; and the echo check.
import fc from 'fast-check';
import { expect } from 'vitest';
import { classifyIp } from '../../src/domain/ip-ranges.js';
import { parseTlsTarget } from '../../src/domain/tls-target.js';

/** Fixed seed: a failure prints its seed and path, and re-runs the same way. */
export const SEED = 0x5eed10;

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encode every UTF-8 byte outside RFC 3986 unreserved (lone surrogates become U+FFFD, never a throw). */
export function encodeBytes(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && UNRESERVED.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
export const encodeText = (s: string) => encodeBytes(Buffer.from(s, 'utf8'));

/** Text of every kind: Unicode, lone surrogates, control characters, separators. */
export const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...'\x00\x01\x1f\x7f\t\r\n /?#%&=+;,@:.[]\\\'"<>'), maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -'), maxLength: 40 }) },
);

/**
 * About 10 KB that stays about 10 KB once percent-encoded (a request line over 16 KiB is refused with 431 before
 * any operation sees it: test/security/limits.test.ts).
 */
export const hugeText = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abcdefXYZ0123456789.-_~'), minLength: 9_000, maxLength: 10_240 }),
  fc.string({ unit: 'grapheme', minLength: 1_000, maxLength: 1_200 }).filter((s) => encodeText(s).length <= 11_000),
);

/** A path segment as it goes on the wire: encoded text, raw bytes (invalid UTF-8 too), malformed escapes, ~10 KB. */
export const pathSegment = fc.oneof(
  { weight: 4, arbitrary: anyText.map(encodeText) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }).map(encodeBytes) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(anyText.map(encodeText), fc.constantFrom('%', '%G1', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%00', '%2F', '%2e%2e', '%25', '%%'), anyText.map(encodeText))
      .map(([a, bad, b]) => `${a}${bad}${b}`),
  },
  { weight: 1, arbitrary: hugeText.map(encodeText) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }).filter((s) => !/[/?#%\\]/.test(s) && s !== '.' && s !== '..') },
);

/** A query string (without '?'): hostile names and values, repeats, empty pairs. */
export const queryString = (names: string[]) =>
  fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...names, ...names), anyText), fc.oneof(anyText, hugeText.map((s) => s.slice(0, 2000)))), { maxLength: 4 })
    .chain((pairs) =>
      // At most 12 KB: the request line must stay under the 16 KiB header limit (431 is tested on its own).
      fc.constantFrom('&', '&&', ';').map((sep) => pairs.map(([k, v]) => `${encodeText(k)}=${encodeText(v)}`).join(sep).slice(0, 12_000)),
    );

const FORBIDDEN = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect', 'host', 'te', 'trailer', 'x-api-key', 'content-type']);
/** Extra request headers a client may send: any token name, any visible value (proxies' and browsers' ones too). */
export const extraHeaders = fc.dictionary(
  fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9!#$&^_`|~+.-]{1,30}$/),
    fc.constantFrom('X-Forwarded-For', 'Accept', 'Accept-Encoding', 'Cookie', 'Range', 'If-None-Match', 'Origin', 'Authorization', 'X-Request-Id'),
  ).filter((n) => !FORBIDDEN.has(n.toLowerCase())),
  fc.oneof(fc.string({ unit: fc.constantFrom(...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))), maxLength: 200 }), fc.constantFrom('gzip, br', 'bytes=0-0', '*/*', '999.1.1.1, 10.0.0.1')),
  { maxKeys: 6 },
);

/** The X-Api-Key to send: the valid key most of the time; else absent, empty, unknown, huge or odd. */
export const apiKeyChoice = (valid: string) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant<string | null>(valid) },
    { weight: 2, arbitrary: fc.constantFrom<string | null>(null, '', ' ', `${valid} `, valid.toUpperCase(), 'vls_' + 'A'.repeat(3000)) },
    { weight: 1, arbitrary: fc.stringMatching(/^[\x21-\x7e]{1,80}$/) },
  );

export interface FuzzBody {
  text: string;
  contentType: string | null;
  /** The string value submitted in the secret field, if any (must never be echoed). */
  secret: string | null;
}

/** Raw JSON texts a parser must survive. */
const hostileJson = (field: string) =>
  fc.constantFrom(
    `{"${field}": 1e400}`,
    `{"${field}": -1e400}`,
    `{"${field}": 123456789012345678901234567890123456789}`,
    `{"${field}": -0}`,
    `{"${field}": "a", "${field}": 7}`,
    `{"${field}": 7, "${field}": "last-wins-secret"}`,
    `{"__proto__": {"${field}": "polluted-secret"}}`,
    `{"constructor": {"prototype": {"${field}": "x"}}}`,
    `${'['.repeat(3000)}${']'.repeat(3000)}`,
    `${'{"a":'.repeat(1500)}1${'}'.repeat(1500)}`,
    `{"${field}": "\\ud800"}`,
    `{"${field}": "\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000"}`,
    '\ufeff{}',
    'null',
    'true',
    '"a string"',
    '[]',
    '{}',
    '',
    '{',
    `{"${field}": "unterminated`,
    '\x00\x01\x02',
  );

/** A request body for an operation whose JSON field `field` is secret (password, card number). */
export const jsonBody = (field: string, value: fc.Arbitrary<string> = anyText) =>
  fc
    .tuple(
      fc.oneof(
        { weight: 5, arbitrary: value.map((v) => ({ text: JSON.stringify({ [field]: v }), secret: v })) },
        { weight: 1, arbitrary: fc.tuple(value, fc.jsonValue()).map(([v, extra]) => ({ text: JSON.stringify({ extra, [field]: v, more: extra }), secret: v })) },
        { weight: 2, arbitrary: fc.jsonValue().map((v) => ({ text: JSON.stringify({ [field]: v }), secret: typeof v === 'string' ? v : null })) },
        { weight: 1, arbitrary: fc.jsonValue().map((v) => ({ text: JSON.stringify(v) ?? '', secret: null })) },
        { weight: 2, arbitrary: hostileJson(field).map((text) => ({ text, secret: null })) },
        { weight: 1, arbitrary: anyText.map((text) => ({ text, secret: null })) },
        { weight: 1, arbitrary: fc.string({ minLength: 16_300, maxLength: 17_000 }).map((v) => ({ text: JSON.stringify({ [field]: v }), secret: v })) },
      ),
      fc.oneof(
        { weight: 8, arbitrary: fc.constant<string | null>('application/json') },
        { weight: 2, arbitrary: fc.constantFrom<string | null>('application/json; charset=utf-8', 'application/problem+json', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', '', null, 'application/json; charset=latin1', 'multipart/form-data; boundary=x') },
      ),
    )
    .map(([b, contentType]): FuzzBody => ({ ...b, contentType }));

function stringLeaves(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringLeaves(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) stringLeaves(x, out);
  return out;
}

/**
 * The response does not carry the submitted secret (when it is 6+ characters), raw or JSON-escaped. With
 * `numbersInBody` (password results carry guesses and crack times), a numeric-looking secret is looked for
 * only in string fields, where an echo would be.
 */
export function expectNoEcho(secret: string | null, res: { text: string; body: unknown; headers: Headers }, numbersInBody = false): void {
  if (secret === null || secret.length < 6) return;
  const where = `response echoes the submitted secret ${JSON.stringify(secret.slice(0, 40))}`;
  for (const leaf of stringLeaves(res.body)) expect(leaf.includes(secret), where).toBe(false);
  // Raw text too, unless the secret is numeric-looking (then a number field could hold it by chance).
  if (!numbersInBody || !/^[0-9.eE+-]+$/.test(secret)) {
    expect(res.text.includes(secret), where).toBe(false);
    expect(res.text.includes(JSON.stringify(secret).slice(1, -1)), where).toBe(false);
  }
  for (const [, v] of res.headers) expect(v.includes(secret), where).toBe(false);
}

/**
 * Whether a request would make the server connect outside loopback: a TLS inspection of a public IP literal.
 * Such requests are not sent (tests use no network beyond 127.0.0.1); host names resolve through the local DNS
 * server, and private targets are refused by the strict server.
 */
export function leavesLoopback(path: string): boolean {
  try {
    const { pathname } = new URL(path, 'http://x');
    if (!pathname.startsWith('/api/v1/ssl/')) return false;
    const target = parseTlsTarget(decodeURIComponent(pathname.split('/').pop() ?? ''));
    return (target.kind === 'ip' || target.kind === 'numeric-ipv4') && classifyIp(target.address)?.public === true;
  } catch {
    return false;
  }
}
