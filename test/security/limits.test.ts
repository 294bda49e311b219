// Limits on what a client controls: header and URL size (431), body size (413), slow-loris and slow bodies (408), idle keep-alive.
import net from 'node:net';
import { STATUS_CODES } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { BODY_LIMIT_BYTES } from '../../src/http/json-body.js';
import { createContractValidator } from '../../src/http/contract-validator.js';
import { createHttpServer, DEFAULT_LIMITS } from '../../src/server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { listenOnLoopback, type Listening } from '../support/listening.js';

const SHORT = { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 300, connectionsCheckingIntervalMs: 50 };

let h: Harness;
let short: Listening;
let shortPort: number;
let checkError: (body: unknown) => string | null;

beforeAll(async () => {
  // TCP: the subjects are the server's own limits (timeouts, header sizes, slow clients) on real connections.
  h = await startHarness({}, { tcp: true });
  checkError = createContractValidator(h.composition.deps.spec.document).checkError;
  // The same composition behind a server with short timeouts.
  short = await listenOnLoopback(await createApp(h.composition.deps), SHORT);
  shortPort = short.port;
});
afterAll(async () => {
  await short.close();
  await h.close();
});

interface RawReply {
  status: number;
  headers: string;
  body: string;
  /** Bytes of the request written before the server closed the connection. */
  written: number;
  /** The server closed the connection (rather than the client giving up). */
  closedByServer: boolean;
}

/**
 * Write `chunks` on a fresh connection, one per `gapMs`, until the server closes it (or `giveUpMs`).
 * Returns what came back.
 */
function raw(port: number, chunks: Array<string | Buffer>, gapMs = 0, giveUpMs = 10_000): Promise<RawReply> {
  return new Promise((resolve) => {
    let gaveUp = false;
    const sock = net.connect(port, '127.0.0.1');
    let got = Buffer.alloc(0);
    let written = 0;
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    const next = () => {
      if (sock.destroyed || i >= chunks.length) return;
      const c = chunks[i++];
      sock.write(c);
      written += Buffer.byteLength(c);
      if (gapMs > 0) timer = setTimeout(next, gapMs);
      else next();
    };
    const giveUp = setTimeout(() => {
      gaveUp = true;
      sock.destroy();
    }, giveUpMs);
    sock.on('connect', next);
    sock.on('data', (d) => (got = Buffer.concat([got, d])));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      clearTimeout(giveUp);
      const text = got.toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body: rest.join('\r\n\r\n'), written, closedByServer: !gaveUp });
    });
  });
}

const request = (lines: string[], body = '') => `${lines.join('\r\n')}\r\n\r\n${body}`;

describe('defaults', () => {
  it('sets every timeout and size limit on the server', async () => {
    const s = createHttpServer(await createApp(h.composition.deps));
    expect({
      headersTimeout: s.headersTimeout,
      requestTimeout: s.requestTimeout,
      keepAliveTimeout: s.keepAliveTimeout,
      maxHeadersCount: (s.maxHeadersCount ?? 0) - 1,
    }).toEqual({
      headersTimeout: DEFAULT_LIMITS.headersTimeoutMs,
      requestTimeout: DEFAULT_LIMITS.requestTimeoutMs,
      keepAliveTimeout: DEFAULT_LIMITS.keepAliveTimeoutMs,
      maxHeadersCount: DEFAULT_LIMITS.maxHeadersCount,
    });
    expect(DEFAULT_LIMITS.headersTimeoutMs).toBeLessThanOrEqual(DEFAULT_LIMITS.requestTimeoutMs);
    expect(DEFAULT_LIMITS.connectionsCheckingIntervalMs).toBeLessThan(DEFAULT_LIMITS.headersTimeoutMs);
  });
});

describe('header and URL size', () => {
  const port = () => Number(new URL(h.url).port);

  it.each([
    ['one huge header', request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', 'Host: x', `X-Junk: ${'a'.repeat(DEFAULT_LIMITS.maxHeaderSize)}`])],
    ['many headers', request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', 'Host: x', ...Array.from({ length: 800 }, (_, i) => `X-H${i}: ${'b'.repeat(20)}`)])],
    ['a very long URL', request([`GET /api/v1/bic/${'C'.repeat(DEFAULT_LIMITS.maxHeaderSize + 1)} HTTP/1.1`, 'Host: x'])],
  ])('answers 431 with ErrorInfo for %s, and closes', async (_label, payload) => {
    const res = await raw(port(), [payload]);
    expect(res.status).toBe(431);
    expect(res.headers).toMatch(/content-type: application\/json/i);
    expect(checkError(JSON.parse(res.body))).toBeNull();
    expect(res.body).not.toContain('aaaaaaaa');
  });

  const withHeaders = (count: number) =>
    request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`, 'Connection: close', ...Array.from({ length: count - 3 }, (_, i) => `X-H${i}: 1`)]);

  it('answers a request of exactly 100 small header lines', async () => {
    const res = await raw(port(), [withHeaders(DEFAULT_LIMITS.maxHeadersCount)]);
    expect(res.status).toBe(200);
  });

  it('answers 431 with ErrorInfo for 101 small header lines, rather than dropping the extra one', async () => {
    const res = await raw(port(), [withHeaders(DEFAULT_LIMITS.maxHeadersCount + 1)]);
    expect(res.status).toBe(431);
    const body = JSON.parse(res.body);
    expect(checkError(body)).toBeNull();
    expect(body).toMatchObject({ code: 'VALIDATION_ERROR', message: 'more than 100 header lines', path: '/api/v1/bic/DEUTDEFF' });
    expect(res.headers).toMatch(/x-request-id: [0-9a-f-]{36}/i);
  });

  it('answers a long URL under the limit through the API: 400 INVALID_FORMAT', async () => {
    const res = await h.call(`/api/v1/bic/${'C'.repeat(8 * 1024)}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
  });

  it('answers malformed HTTP with 400 ErrorInfo', async () => {
    const res = await raw(port(), ['GET /api/v1/bic/DE\x01UT HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(res.status).toBe(400);
    expect(checkError(JSON.parse(res.body))).toBeNull();
  });
});

describe('requests Node would answer with an empty body', () => {
  const port = () => Number(new URL(h.url).port);

  it('an HTTP/1.1 request without Host: 400 ErrorInfo naming the header (RFC 9112 3.2)', async () => {
    const res = await raw(port(), [request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', `X-Api-Key: ${h.key}`, 'Connection: close'])]);
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body);
    expect(checkError(body)).toBeNull();
    expect(body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'Host' }] });
  });

  it('an HTTP/1.0 request without Host is served (Host is an HTTP/1.1 requirement)', async () => {
    const res = await raw(port(), [request(['GET /api/v1/bic/DEUTDEFF HTTP/1.0', `X-Api-Key: ${h.key}`])]);
    expect(res.status).toBe(200);
  });

  it.each([
    ['two Host lines', ['Host: x', 'Host: y']],
    ['a Host with a space', ['Host: a b']],
    ['a Host with a path', ['Host: x/y']],
    ['a Host with userinfo', ['Host: x@y']],
    ['an unclosed IPv6 Host', ['Host: [::1']],
  ])('%s: 400 ErrorInfo naming Host (RFC 9112 3.2)', async (_, hosts) => {
    const res = await raw(port(), [request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', ...hosts, `X-Api-Key: ${h.key}`, 'Connection: close'])]);
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body);
    expect(checkError(body)).toBeNull();
    expect(body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'Host' }] });
  });

  it.each(['Host: api.example:8080', 'Host: [::1]:80', 'Host: 127.0.0.1', 'Host:'])('%s is served', async (host) => {
    const res = await raw(port(), [request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', host, `X-Api-Key: ${h.key}`, 'Connection: close'])]);
    expect(res.status).toBe(200);
  });

  it.each([
    ['/healthz', '"status":"ok"'],
    ['/api/v1/bic/DEUTDEFF', '"bic":"DEUTDEFFXXX"'],
  ])('serves an absolute-form target for %s (RFC 9112 3.2.2)', async (path, want) => {
    const res = await raw(port(), [request([`GET http://api.example${path} HTTP/1.1`, 'Host: api.example', `X-Api-Key: ${h.key}`, 'Connection: close'])]);
    expect(res.status).toBe(200);
    expect(res.body).toContain(want);
  });

  it('CONNECT: 405 ErrorInfo, not a silently closed connection', async () => {
    const res = await raw(port(), [request(['CONNECT api.example:443 HTTP/1.1', 'Host: api.example:443'])]);
    expect(res.status).toBe(405);
    expect(res.headers).toMatch(/\r\nallow: GET, HEAD, POST\r\n/i); // field names are case-insensitive (RFC 9110 §5.1)
    const body = JSON.parse(res.body);
    expect(checkError(body)).toBeNull();
    expect(body.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers pipelined requests in order before refusing a malformed one behind them', async () => {
    const card = '{"cardNumber":"4111111111111111"}';
    const res = await raw(port(), [
      request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`]) +
        request(['POST /api/v1/creditcard/validate HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`, 'Content-Type: application/json', `Content-Length: ${card.length}`], card) +
        'FOO / HTTP/1.1\r\nHost: x\r\n\r\n',
    ]);
    const text = `${res.headers}\r\n\r\n${res.body}`;
    expect([...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])).toEqual(['200', '200', '400']);
    expect(text).toContain('"bic":"DEUTDEFFXXX"');
    expect(text).toContain('"lastFourDigits":"1111"');
    expect(res.closedByServer).toBe(true);
  });

  it('refuses a malformed chunked body at once (the request it cut short is not waited for)', async () => {
    const head = request(['POST /api/v1/creditcard/validate HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked']);
    const res = await raw(port(), [`${head}5\r\n{"car\r\nZZ\r\n`], 0, 3000);
    expect(res.closedByServer).toBe(true);
    expect(res.status).toBe(400);
    expect(checkError(JSON.parse(res.body))).toBeNull();
  });

  it('an Expect other than 100-continue is ignored (RFC 9110 10.1.1) and the request answered, not an empty 417', async () => {
    const res = await raw(port(), [request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', 'Host: x', 'Expect: 200-ok', `X-Api-Key: ${h.key}`, 'Connection: close'])]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ bic: 'DEUTDEFFXXX', valid: true });
  });
});

describe('body size', () => {
  const card = (body: string, extra: Record<string, string> = {}) =>
    h.call('/api/v1/creditcard/validate', { method: 'POST', headers: { 'content-type': 'application/json', ...extra }, body });
  /** A JSON body of exactly `size` bytes. */
  const sized = (size: number) => {
    const shell = JSON.stringify({ cardNumber: '' });
    return JSON.stringify({ cardNumber: '4'.repeat(size - shell.length) });
  };

  it('reads a body of exactly 16 KiB (then refuses the over-long value: 400)', async () => {
    const body = sized(BODY_LIMIT_BYTES);
    expect(Buffer.byteLength(body)).toBe(16 * 1024);
    const res = await card(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
  });

  it('answers 413 for 16 KiB + 1 byte', async () => {
    const res = await card(sized(BODY_LIMIT_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.text).not.toContain('4444444444');
  });

  const chunked = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
  const chunkedCard = (digitChunks: number) =>
    raw(Number(new URL(h.url).port), [
      request(['POST /api/v1/creditcard/validate HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close']),
      chunked('{"cardNumber":"'),
      ...Array.from({ length: digitChunks }, () => chunked('4'.repeat(4096))),
      chunked('"}'),
      '0\r\n\r\n',
    ]);

  it('closes the connection after a 413 for a declared length, without reading the body', async () => {
    const head = request(['POST /api/v1/creditcard/validate HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`, 'Content-Type: application/json', 'Content-Length: 1000000']);
    const res = await raw(Number(new URL(h.url).port), [head], 0, 3000);
    expect(res.status).toBe(413);
    expect(res.headers).toMatch(/\r\nConnection: close\r\n/i);
    expect(res.closedByServer).toBe(true);
  });

  it('reads a chunked body under 16 KiB that declares no length (then refuses the long value: 400)', async () => {
    const res = await chunkedCard(3);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).code).toBe('INVALID_FORMAT');
  });

  it('answers 413 for a chunked body over 16 KiB that declares no length', async () => {
    const res = await chunkedCard(5);
    expect(res.status).toBe(413);
    expect(checkError(JSON.parse(res.body))).toBeNull();
  });
});

describe('slow clients (short limits injected)', () => {
  it('cuts a slow-loris that sends its headers byte by byte, with 408, long before it finishes', async () => {
    const head = request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`, `X-Pad: ${'p'.repeat(200)}`]);
    const res = await raw(shortPort, [...head], 20);
    expect(res.status).toBe(408);
    expect(checkError(JSON.parse(res.body))).toBeNull();
    expect(res.written).toBeLessThan(head.length);
    expect(res.closedByServer).toBe(true);
  });

  it('cuts a connection that never sends a byte', async () => {
    const res = await raw(shortPort, []);
    expect(res.status).toBe(408);
    expect(res.written).toBe(0);
    expect(res.closedByServer).toBe(true);
  });

  it('cuts a request whose body trickles past requestTimeout', async () => {
    const body = JSON.stringify({ cardNumber: '4571 0800 1234 5677' });
    const head = request(['POST /api/v1/creditcard/validate HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`, 'Content-Type: application/json', `Content-Length: ${body.length}`]);
    const res = await raw(shortPort, [head, ...body], 60);
    expect(res.status).toBe(408);
    expect(res.written).toBeLessThan(head.length + body.length);
    expect(res.closedByServer).toBe(true);
  });

  it('closes an idle keep-alive connection after keepAliveTimeout', async () => {
    const res = await raw(shortPort, [request(['GET /api/v1/bic/DEUTDEFF HTTP/1.1', 'Host: x', `X-Api-Key: ${h.key}`])]);
    expect(res.status).toBe(200);
    expect(res.headers).toMatch(/keep-alive/i);
    expect(res.closedByServer).toBe(true);
  });
});

describe('refusals made before the app: the head of every API answer', () => {
  const port = () => Number(new URL(h.url).port);
  const bic = 'GET /api/v1/bic/DEUTDEFF HTTP/1.1';

  it.each([
    ['101 header lines (431, before the app)', 431, request([bic, 'Host: x', ...Array.from({ length: 100 }, (_, i) => `X-H${i}: 1`)])],
    ['no Host (400, before the app)', 400, request([bic])],
    ['malformed HTTP (400, written on the socket)', 400, 'GET /api/v1/bic/DE\x01UT HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['CONNECT (405, written on the socket)', 405, request(['CONNECT api.example:443 HTTP/1.1', 'Host: api.example:443'])],
    ['an unknown path (404, through the app)', 404, request(['GET /nowhere HTTP/1.1', 'Host: x', 'Connection: close'])],
  ])('%s', async (_label, status, payload) => {
    const res = await raw(port(), [payload]);
    const field = (name: string) => new RegExp(`\\r\\n${name}: ([^\\r]*)`, 'i').exec(res.headers)?.[1];
    expect(res.headers.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`);
    expect(field('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(field('content-length'))).toBe(Buffer.byteLength(res.body));
    expect(field('cache-control')).toBe('no-store');
    expect(field('x-content-type-options')).toBe('nosniff');
    expect(field('connection')).toBe('close');
    const body = JSON.parse(res.body);
    expect(checkError(body)).toBeNull();
    expect(field('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.requestId).toBe(field('x-request-id'));
  });
});
