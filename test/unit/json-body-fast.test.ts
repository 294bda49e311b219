// The fork of koa-body's JSON reading (src/http/json-body-fast/) against the library: the same bytes sent to
// readJsonBody once wholly arrived before it reads (the fork) and once arriving after koa-body started reading
// (the library) give the same parsed value or the same refusal. Over TCP, so chunked and split bodies are Node's own.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { BODY_LIMIT_BYTES, readJsonBody } from '../../src/http/json-body.js';
import { VERIFIED_VERSIONS } from '../../src/http/json-body-fast/index.js';
import { waitFor } from '../support/wait.js';

type Arrival = 'whole' | 'late';
interface Outcome {
  value?: string;
  refusal?: { status: number; code: string; message: string; details: unknown };
  /** Whether the request stream was ever switched to flowing mode (a 'data' listener: koa-body's raw-body read it). */
  flowed: boolean;
  /** Whether Node had marked the request complete when readJsonBody began. */
  completeAtRead: boolean;
}

let server: Server;
let port = 0;
/** The late request's handler has begun reading: the client may send the body. */
let reading: (() => void) | null = null;

const app = new Koa();
app.use(async (ctx) => {
  const req = ctx.req;
  let outcome: Omit<Outcome, 'flowed' | 'completeAtRead'>;
  const late = req.headers['x-arrival'] === 'late';
  if (!late) {
    // As in the service, a few promises after the request event: the bytes of the request's packet are in the buffer,
    // but Node marks the request complete only after that (its parser's next callback).
    await null;
    const declared = Number(req.headers['content-length']);
    await waitFor(() => req.complete || req.readableLength === declared, { what: 'the whole request' });
  }
  const completeAtRead = req.complete;
  try {
    const read = readJsonBody(ctx);
    if (late) reading?.();
    const value = await read;
    outcome = { value: value === undefined ? 'undefined' : JSON.stringify(value) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    outcome = { refusal: { status: err.status, code: err.code, message: err.message, details: err.details } };
  }
  ctx.body = { ...outcome, flowed: req.readableFlowing !== null, completeAtRead };
});

beforeAll(async () => {
  // A 64 KiB buffer, so that a body over the limit is never paused half-read and the whole-arrival wait ends.
  server = createServer({ highWaterMark: 64 * 1024 }, app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface Case {
  body: Buffer[];
  headers?: Record<string, string>;
  chunked?: boolean;
  method?: string;
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? utf8(p) : Buffer.from(p))));
const BOM = [0xef, 0xbb, 0xbf];
const chunkOf = (b: Buffer) => Buffer.concat([utf8(`${b.length.toString(16)}\r\n`), b, utf8('\r\n')]);

/** One request on its own connection; the answer's JSON once its Content-Length has arrived. */
function send(c: Case, arrival: Arrival): Promise<Outcome> {
  const fields = {
    'content-type': 'application/json',
    ...c.headers,
    'x-arrival': arrival,
    ...(c.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(Buffer.concat(c.body).length) }),
  };
  const head = `${c.method ?? 'POST'} /x HTTP/1.1\r\nhost: t\r\n${Object.entries(fields).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  const parts = c.chunked ? [...c.body.filter((b) => b.length > 0).map(chunkOf), utf8('0\r\n\r\n')] : c.body;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = Buffer.alloc(0);
    socket.on('error', () => {}); // a refusal may answer before the body is sent; the answer is what counts
    socket.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const end = got.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(got.subarray(0, end).toString())?.[1] ?? NaN);
      if (end >= 0 && got.length >= end + 4 + length) {
        socket.destroy();
        const text = got.subarray(end + 4, end + 4 + length).toString();
        if (!got.subarray(0, 12).toString().endsWith('200')) reject(new Error(`the test server failed: ${text}`));
        else resolve(JSON.parse(text) as Outcome);
      }
    });
    const writeBody = () => parts.forEach((p) => socket.write(p));
    if (arrival === 'whole') {
      socket.write(head);
      writeBody();
    } else {
      reading = () => setImmediate(writeBody);
      socket.write(head);
    }
  });
}

const card = '{"cardNumber":"4111 1111 1111 1111"}';
const nested = `${'['.repeat(2000)}"\\u0041"${']'.repeat(2000)}`;
const big = (n: number) => `{"a":"${'x'.repeat(n - 8)}"}`;
/** [name, case, whether the fork reads it when it has wholly arrived] */
const CASES: [string, Case, boolean][] = [
  ['an object', { body: [utf8(card)] }, true],
  ['an object with whitespace around it', { body: [utf8(` \t\r\n${card}\n `)] }, true],
  ['an array', { body: [utf8('[1,{"a":2}]')] }, true],
  ['whitespace alone', { body: [utf8(' \t\r\n')] }, true],
  ['a JSON string', { body: [utf8('"4111111111111111"')] }, true],
  ['a number', { body: [utf8('42')] }, true],
  ['null', { body: [utf8('null')] }, true],
  ['true', { body: [utf8('true')] }, true],
  ['an object after a form feed (not JSON whitespace)', { body: [utf8(`\f${card}`)] }, true],
  ['malformed JSON', { body: [utf8('{"cardNumber":')] }, true],
  ['trailing garbage', { body: [utf8(`${card}x`)] }, true],
  ['a UTF-8 BOM before an object', { body: [bytes(BOM, card)] }, true],
  ['two BOMs', { body: [bytes(BOM, BOM, card)] }, true],
  ['a BOM alone', { body: [bytes(BOM)] }, true],
  ['a BOM split across chunks', { body: [bytes([0xef]), bytes([0xbb, 0xbf], card)], chunked: true }, true],
  ['a BOM after whitespace', { body: [bytes(' ', BOM, card)] }, true],
  ['invalid UTF-8 in a string', { body: [bytes('{"cardNumber":"41', [0xff], '11"}')] }, true],
  ['invalid UTF-8 before the object', { body: [bytes([0xff], card)] }, true],
  ['invalid UTF-8 after the object', { body: [bytes(card, [0xc3])] }, true],
  ['a truncated sequence in a string', { body: [bytes('{"a":"', [0xe2, 0x82], '"}')] }, true],
  ['an overlong encoding', { body: [bytes('{"a":"', [0xc0, 0xaf], '"}')] }, true],
  ['an encoded surrogate (CESU-8)', { body: [bytes('{"a":"', [0xed, 0xa0, 0x80], '"}')] }, true],
  ['a raw U+FFFD', { body: [utf8('{"a":"\uFFFD"}')] }, true],
  ['an escaped \\ufffd', { body: [utf8('{"a":"\\ufffd"}')] }, true],
  ['a lone escaped surrogate', { body: [utf8('{"a":"\\ud800"}')] }, true],
  ['multi-byte characters', { body: [utf8('{"a":"é € 𝄞 日本"}')] }, true],
  ['multi-byte characters split across chunks', { body: [bytes('{"a":"', [0xe2]), bytes([0x82]), bytes([0xac], '"}')], chunked: true }, true],
  ['an object in many chunks', { body: [...card].map(utf8), chunked: true }, true],
  ['an object in one chunk', { body: [utf8(card)], chunked: true }, true],
  ['a chunked body of no bytes', { body: [], chunked: true }, true],
  ['an empty body (Content-Length: 0)', { body: [] }, false],
  ['whitespace in chunks', { body: [utf8(' '), utf8('\n')], chunked: true }, true],
  ['a __proto__ member', { body: [utf8('{"__proto__":{"admin":true}}')] }, true],
  ['a nested __proto__ member', { body: [utf8('{"a":[{"b":{"__proto__":1}}]}')] }, true],
  ['an escaped __proto__ member', { body: [utf8('{"\\u005f_proto\\u005F_":1}')] }, true],
  ['__proto__ as a value', { body: [utf8('{"a":"__proto__","b":["__proto__"]}')] }, true],
  ['a constructor member', { body: [utf8('{"constructor":{"prototype":1}}')] }, true],
  ['arrays nested 2,000 deep', { body: [utf8(nested)] }, true],
  ['exactly the limit', { body: [utf8(big(BODY_LIMIT_BYTES))] }, true],
  ['one byte over the limit (Content-Length)', { body: [utf8(big(BODY_LIMIT_BYTES + 1))] }, false],
  ['exactly the limit, chunked', { body: [utf8(big(BODY_LIMIT_BYTES))], chunked: true }, true],
  ['one byte over the limit, chunked', { body: [utf8(big(BODY_LIMIT_BYTES + 1))], chunked: true }, true],
  ['over the limit in many chunks', { body: Array.from({ length: 17 }, () => utf8(' '.repeat(1024))), chunked: true }, true],
  ['Content-Encoding: identity', { body: [utf8(card)], headers: { 'content-encoding': 'identity' } }, true],
  ['Content-Encoding: IDENTITY', { body: [utf8(card)], headers: { 'content-encoding': 'IDENTITY' } }, true],
  ['gzip', { body: [gzipSync(card)], headers: { 'content-encoding': 'gzip' } }, false],
  ['x-gzip, chunked', { body: [gzipSync(card)], headers: { 'content-encoding': 'x-gzip' }, chunked: true }, false],
  ['deflate', { body: [deflateSync(card)], headers: { 'content-encoding': 'deflate' } }, false],
  ['br', { body: [brotliCompressSync(card)], headers: { 'content-encoding': 'br' } }, false],
  ['gzip of a BOM and invalid UTF-8', { body: [gzipSync(bytes(BOM, '{"a":"', [0xff], '"}'))], headers: { 'content-encoding': 'gzip' } }, false],
  ['gzip inflating over the limit', { body: [gzipSync(' '.repeat(BODY_LIMIT_BYTES + 1))], headers: { 'content-encoding': 'gzip' } }, false],
  ['corrupt gzip', { body: [utf8(card)], headers: { 'content-encoding': 'gzip' } }, false],
  ['an unknown coding', { body: [utf8(card)], headers: { 'content-encoding': 'zstd' } }, false],
  ['charset=utf-8', { body: [utf8(card)], headers: { 'content-type': 'application/json; charset=utf-8' } }, true],
  ['charset="UTF-8" without a space', { body: [utf8(card)], headers: { 'content-type': 'application/json;charset="UTF-8"' } }, true],
  ['APPLICATION/JSON', { body: [utf8(card)], headers: { 'content-type': 'APPLICATION/JSON' } }, true],
  ['charset=utf8', { body: [utf8(card)], headers: { 'content-type': 'application/json; charset=utf8' } }, false],
  ['a tab before the charset', { body: [utf8(card)], headers: { 'content-type': 'application/json;\tcharset=utf-8' } }, false],
  ['another parameter', { body: [utf8(card)], headers: { 'content-type': 'application/json; v=1' } }, false],
  ['a +json type', { body: [utf8(card)], headers: { 'content-type': 'application/merge-patch+json' } }, false],
  ['charset=latin1', { body: [utf8(card)], headers: { 'content-type': 'application/json; charset=latin1' } }, false],
  ['text/plain', { body: [utf8(card)], headers: { 'content-type': 'text/plain' } }, false],
  ['PUT', { body: [utf8(card)], method: 'PUT' }, true],
  ['DELETE with a body', { body: [utf8(card)], method: 'DELETE' }, true],
  ['GET with a body (never read)', { body: [utf8(card)], method: 'GET' }, false],
];

describe('json-body-fast against koa-body', () => {
  it.each(CASES)('%s: the same answer wholly arrived (fork) as arriving late (koa-body)', async (_name, c, forked) => {
    const library = await send(c, 'late');
    const fork = await send(c, 'whole');
    expect({ ...fork, flowed: undefined, completeAtRead: undefined }).toEqual({ ...library, flowed: undefined, completeAtRead: undefined });
    // The fork read it (no 'data' listener) exactly where it should; the late arrival always went through koa-body.
    expect(fork.flowed).toBe(!forked && library.flowed);
    if (forked) expect(library.flowed).toBe(true);
  });

  it('reads a body sent in one packet before Node marks its request complete', async () => {
    const outcome = await send({ body: [utf8(card)] }, 'whole');
    expect(outcome).toEqual({ value: card, flowed: false, completeAtRead: false });
  });

  it('answers the card body with its value and the refusals with the contract\'s codes', async () => {
    expect((await send({ body: [utf8(card)] }, 'whole')).value).toBe(card);
    expect((await send({ body: [utf8('42')] }, 'whole')).refusal).toMatchObject({ status: 400, code: 'INVALID_FORMAT', details: [{ message: 'must be a JSON object' }] });
    expect((await send({ body: [bytes('{"a":"', [0xff], '"}')] }, 'whole')).refusal?.message).toBe('request body must be UTF-8 encoded JSON');
    expect((await send({ body: [utf8('{"__proto__":1}')] }, 'whole')).refusal?.message).toBe('request body is not valid JSON');
    expect((await send({ body: [utf8(big(BODY_LIMIT_BYTES + 1))], chunked: true }, 'whole')).refusal).toMatchObject({ status: 413, code: 'VALIDATION_ERROR' });
  });
});

describe('the versions the fork was verified against', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<'dependencies' | 'overrides', Record<string, unknown>>;
  const installed = (name: string) => (JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;
  const packages = Object.entries(VERIFIED_VERSIONS);

  it.each(packages)('package.json pins %s to %s exactly', (name, version) => {
    expect(name === 'koa-body' ? manifest.dependencies[name] : manifest.overrides[name]).toBe(version);
  });

  it.each(packages)('the installed %s is %s', (name, version) => {
    expect(installed(name)).toBe(version);
  });
});
