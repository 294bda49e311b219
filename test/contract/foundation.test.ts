// The error model, authentication, routing and non-API routes, through the app in-process and the contract check.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { ApiError } from '../../src/errors.js';
import { startHarness, type Harness } from '../support/harness.js';
import { inject } from '../support/inject.js';
import { waitFor } from '../support/wait.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, {
    handlers: {
      // A handler that fails unexpectedly, to see the 500 path (its message must not reach the client).
      validateIban: () => {
        throw new Error('secret internal detail at /srv/app.ts:42');
      },
    },
  });
});
afterAll(() => h.close());

describe('authentication', () => {
  it('answers 401 UNAUTHORIZED with requestId null when the key header is missing', async () => {
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key: null });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', requestId: null, status: 401, path: '/api/v1/bic/DEUTDEFF' });
    expect(res.body.message).toMatch(/X-Api-Key header is missing/);
    expect(res.headers.get('x-request-id')).toBeNull();
  });

  it('answers 401 for an empty key header too', async () => {
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key: '' });
    expect(res.status).toBe(401);
  });

  it('answers 403 FORBIDDEN for an unknown key', async () => {
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key: 'vls_not-a-real-key' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(res.body.requestId).toMatch(UUID);
  });

  it.each([
    ['revoked', 'revoked'],
    ['inactive', 'inactive'],
  ] as const)('answers 403 for a %s key', async (_label, status) => {
    const { id, key } = await h.createKey(status);
    expect((await h.call('/api/v1/bic/DEUTDEFF', { key })).status).toBe(200);
    await h.composition.keyStore.setStatus(id, status);
    await h.composition.keys.refresh();
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  it('lets a reactivated key in again', async () => {
    const { id, key } = await h.createKey('flip');
    await h.composition.keyStore.setStatus(id, 'inactive');
    await h.composition.keys.refresh();
    expect((await h.call('/api/v1/bic/DEUTDEFF', { key })).status).toBe(403);
    await h.composition.keyStore.setStatus(id, 'active');
    await h.composition.keys.refresh();
    expect((await h.call('/api/v1/bic/DEUTDEFF', { key })).status).toBe(200);
  });

  it('sees a key change made by another writer within a second, without an explicit refresh', async () => {
    const { id, key } = await h.createKey('poll');
    await h.composition.keyStore.setStatus(id, 'revoked');
    // The key directory polls the store every 250 ms: a second is the deadline, the wait ends at the first 403.
    const status = await waitFor(async () => {
      const s = (await h.call('/api/v1/bic/DEUTDEFF', { key })).status;
      return s === 200 ? null : s;
    }, { timeoutMs: 1000, intervalMs: 50, what: 'a 403 for the revoked key' });
    expect(status).toBe(403);
  });
});

describe('routing errors', () => {
  it('ignores one trailing slash on an API path, as openapi.yaml says, but not on the service routes', async () => {
    const res = await h.call('/api/v1/bic/DEUTDEFF/');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bic: 'DEUTDEFFXXX', valid: true });
    expect((await h.call('/api/v1/bic/DEUTDEFF//')).status).toBe(404);
    expect((await h.fetch('/healthz/')).status).toBe(404);
  });

  it('answers 404 RESOURCE_NOT_FOUND for an unknown API path', async () => {
    const res = await h.call('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'RESOURCE_NOT_FOUND', path: '/api/v1/nothing-here', details: [] });
  });

  it('answers 404 without echoing a card number put in the path, masking it to its last four in path', async () => {
    const res = await h.call('/api/v1/creditcard/4111111111111111');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ message: 'no endpoint at this path', path: '/api/v1/creditcard/************1111' });
    expect(res.text).not.toContain('4111111111111111');
  });

  it.each(['/api/v1/dns/4111111111111111', '/api/v1/dns/4111%201111%201111%201111'])(
    'masks a card number sent to another endpoint in the path, and keeps it out of the message and details: %s',
    async (path) => {
      const res = await h.call(path);
      expect(res.status).toBe(400);
      expect(res.body.path).toBe('/api/v1/dns/************1111');
      // The refusal is the contract's own wording (DnsName's x-invalid-message in openapi.yaml): it names no value.
      for (const text of [res.body.message, res.body.error, ...res.body.details.map((d: { message: string }) => d.message)]) {
        expect(text.replace(/\D/g, '')).not.toContain('4111111111111111');
      }
    },
  );

  it('echoes an IBAN in the path of an error unmasked (its digits do not pass Luhn)', async () => {
    const res = await h.call('/api/v1/iban/DE89370400440532013000', { key: null });
    expect(res.body.path).toBe('/api/v1/iban/DE89370400440532013000');
  });

  it('answers 404 with ErrorInfo for an unknown path outside the API', async () => {
    const res = await h.call('/favicon.ico', { key: null });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('RESOURCE_NOT_FOUND');
  });

  it.each([
    ['DELETE', '/api/v1/bic/DEUTDEFF', 'GET, HEAD'],
    ['POST', '/api/v1/email?address=a@b.de', 'GET, HEAD'],
    ['GET', '/api/v1/password/strength', 'POST'],
    ['PUT', '/api/v1/creditcard/validate', 'POST'],
    ['POST', '/healthz', 'GET, HEAD'],
  ])('answers 405 with Allow for %s %s', async (method, path, allow) => {
    const res = await h.call(path, { method });
    expect(res.status).toBe(405);
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe(allow);
  });

  it('refuses a browser preflight: 405 and no CORS headers, as documented', async () => {
    const res = await h.call('/api/v1/bic/DEUTDEFF', {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' },
    });
    expect(res.status).toBe(405);
    expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    const plain = await h.call('/api/v1/bic/DEUTDEFF', { headers: { origin: 'https://shop.example' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('request validation', () => {
  it('names the missing query parameter', async () => {
    const res = await h.call('/api/v1/email');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'MISSING_PARAMETER',
      message: 'parameter address is required',
      details: [{ field: 'address', message: 'is required' }],
    });
  });

  it('names the missing body field', async () => {
    const res = await h.call('/api/v1/creditcard/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'MISSING_PARAMETER', message: 'parameter cardNumber is required' });
  });

  it('treats an empty POST body as an object without the field', async () => {
    const res = await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('parameter password is required');
  });

  it.each([
    ['a number', '{"cardNumber": 4111111111111111}', 'cardNumber'],
    ['an array body', '[1,2]', 'body'],
    ['a string body', '"4111111111111111"', 'body'],
    ['over 64 characters', JSON.stringify({ cardNumber: '4'.repeat(65) }), 'cardNumber'],
  ])('answers 400 INVALID_FORMAT with details for %s, without echoing it', async (_label, body, field) => {
    const res = await h.call('/api/v1/creditcard/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.body.details[0].field).toBe(field);
    expect(res.text).not.toContain('4111111111111111');
    expect(res.text).not.toContain('4'.repeat(20));
  });

  it('answers 400 INVALID_FORMAT for malformed JSON without echoing the body', async () => {
    const res = await h.call('/api/v1/password/strength', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"password": "hunter2-secret',
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', message: 'request body is not valid JSON' });
    expect(res.text).not.toContain('hunter2');
  });

  it.each([
    ['Latin-1 bytes', 'application/json', Buffer.from('{"password":"caf\xe9-Sommer-2019"}', 'latin1')],
    ['a raw U+FFFD', 'application/json', Buffer.from('{"password":"caf\uFFFD-Sommer-2019"}', 'utf8')],
    ['a charset other than UTF-8', 'application/json; charset=iso-8859-1', Buffer.from('{"password":"cafe-Sommer-2019"}')],
  ])('answers 400 INVALID_FORMAT for a body with %s, rather than checking a different password', async (_, type, body) => {
    const res = await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': type }, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', message: 'request body must be UTF-8 encoded JSON', details: [{ field: 'body' }] });
    expect(res.text).not.toContain('Sommer');
  });

  it.each([
    ['the escape \\ufffd', 'application/json', '{"password":"caf\\ufffd-Sommer-2019"}'],
    ['charset=UTF-8', 'application/json; charset=UTF-8', '{"password":"café-Sommer-2019"}'],
    ['charset="utf-8"', 'application/json;charset="utf-8"', '{"password":"café-Sommer-2019"}'],
  ])('accepts a body with %s', async (_, type, body) => {
    const res = await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': type }, body });
    // This harness has no range API: an accepted body gets as far as the breach check, which answers 502.
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
  });

  it.each(['"hunter2-secret"', '42', 'null'])('answers 400 "must be a JSON object" for the JSON text %s', async (body) => {
    const res = await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', message: 'request body must be a JSON object', details: [{ field: 'body' }] });
    expect(res.text).not.toContain('hunter2');
  });

  it('answers an array body as not an object', async () => {
    const res = await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '["hunter2-secret"]' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'body', message: 'must be object' }] });
    expect(res.text).not.toContain('hunter2');
  });

  it('answers 400 INVALID_FORMAT for a non-JSON content type', async () => {
    const res = await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hunter2' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.body.message).toMatch(/application\/json/);
  });

  it.each(['application/json; charset=utf-8', 'application/merge-patch+json', 'APPLICATION/JSON'])(
    'parses a body sent as %s like application/json',
    async (type) => {
      const res = await h.call('/api/v1/creditcard/validate', { method: 'POST', headers: { 'content-type': type }, body: '{"cardNumber":"4111 1111 1111 1111"}' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ valid: true, cardBrand: 'Visa', lastFourDigits: '1111' });
    },
  );

  it.each([
    ['gzip', gzipSync],
    ['GZIP', gzipSync],
    ['x-gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('parses a body sent with Content-Encoding %s', async (coding, compress) => {
    const res = await h.call('/api/v1/creditcard/validate', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': coding },
      body: compress(Buffer.from('{"cardNumber":"4111 1111 1111 1111"}')),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: true, lastFourDigits: '1111' });
  });

  it.each([
    ['an unsupported coding', 'zstd', Buffer.from('{"cardNumber":"4111111111111111"}'), 'request body has an unsupported Content-Encoding'],
    ['a name that is an object property', 'constructor', Buffer.from('{"cardNumber":"4111111111111111"}'), 'request body has an unsupported Content-Encoding'],
    ['two codings', 'gzip, br', gzipSync('{"cardNumber":"4111111111111111"}'), 'request body has an unsupported Content-Encoding'],
    ['gzip that is not gzip', 'gzip', Buffer.from('{"cardNumber":"4111111111111111"}'), 'request body could not be decompressed'],
    ['truncated br', 'br', brotliCompressSync('{"cardNumber":"4111111111111111"}').subarray(0, 8), 'request body could not be decompressed'],
  ])('answers 400 INVALID_FORMAT for %s, without echoing the body', async (_, coding, body, message) => {
    const res = await h.call('/api/v1/creditcard/validate', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': coding },
      body,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', message, details: [{ field: 'body' }] });
    expect(res.text).not.toContain('4111111111111111');
  });

  it('answers 413 for a small compressed body that inflates beyond 16 KiB', async () => {
    const body = gzipSync(JSON.stringify({ password: 'x'.repeat(1024 * 1024) }));
    expect(body.length).toBeLessThan(16 * 1024);
    const res = await h.call('/api/v1/password/strength', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  it('answers 413 VALIDATION_ERROR for a body over 16 KiB', async () => {
    const body = JSON.stringify({ password: 'x'.repeat(17 * 1024) });
    const res = await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.text).not.toContain('xxxxxxxx');
  });

  it('answers 400 INVALID_FORMAT for broken percent-encoding in a path parameter', async () => {
    const res = await h.call('/api/v1/bic/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
  });

  it('answers 400 INVALID_FORMAT for a repeated query parameter', async () => {
    const res = await h.call('/api/v1/email?address=a@b.de&address=c@d.de');
    expect(res.status).toBe(400);
    expect(res.body.details[0]).toEqual({ field: 'address', message: 'must be given once' });
  });
});

describe('unexpected errors', () => {
  it('answers 500 INTERNAL_ERROR without internals, and logs it with the request id', async () => {
    const res = await h.call('/api/v1/iban/DE89370400440532013000');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ code: 'INTERNAL_ERROR', message: 'internal server error', details: [] });
    expect(res.text).not.toMatch(/secret|srv|\.ts|at /);
    h.composition.deps.logger.flush();
    const line = await waitFor(() => h.logs.find((l) => l.includes('unexpected error') && l.includes(res.body.requestId)), { what: 'the error log line' });
    expect(JSON.parse(line).operationId).toBe('validateIban');
  });
});

describe('access log', () => {
  it('writes one line per request with only fixed, safe fields: never the key, path, query or body', async () => {
    // A malformed address: no DNS query leaves the machine.
    const res = await h.call('/api/v1/email?address=someone.private@nodots');
    h.composition.deps.logger.flush();
    const ofRequest = () => h.logs.map((l) => JSON.parse(l)).filter((l) => l.requestId === res.headers.get('x-request-id'));
    await waitFor(() => ofRequest().length > 0, { what: 'the access log line' });
    const lines = ofRequest();
    expect(lines).toHaveLength(1);
    expect(Object.keys(lines[0]).sort()).toEqual(
      ['durationMs', 'keyId', 'level', 'method', 'operationId', 'requestId', 'route', 'service', 'status', 'time'].sort(),
    );
    expect(lines[0]).toMatchObject({ method: 'GET', route: '/api/v1/email', operationId: 'validateEmail', status: 200 });
    expect(lines[0].keyId).toMatch(/^key_/);
    const all = h.logs.join('\n');
    expect(all).not.toContain(h.key);
    expect(all).not.toContain('someone.private');
  });
});

describe('response header names as written', () => {
  it('are lower case and each sent once (field names are case-insensitive, RFC 9110 5.1)', async () => {
    // The bytes Node writes for the response, field names as sent (in-process: the same writer a socket gets).
    const raw = (await h.inject('/api/v1/bic/DEUTDEFF', { headers: { 'x-api-key': h.key } })).names;
    const names = raw.filter((n) => n !== 'Date' && n !== 'Connection' && n !== 'Keep-Alive'); // Node's own
    expect(names).toEqual(names.map((n) => n.toLowerCase()));
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining(['content-type', 'content-length', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-quota-daily-remaining', 'x-quota-monthly-remaining']),
    );
  });
});

describe('request ids', () => {
  it('returns a UUID in X-Request-Id and in ErrorInfo, the same one', async () => {
    const res = await h.call('/api/v1/bic/D$');
    expect(res.headers.get('x-request-id')).toMatch(UUID);
    expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('gives each request its own id', async () => {
    const a = await h.call('/api/v1/bic/DEUTDEFF');
    const b = await h.call('/api/v1/bic/DEUTDEFF');
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('non-API routes', () => {
  it('serves the contract as JSON and YAML', async () => {
    const json = await h.fetch('/openapi.json');
    expect(json.status).toBe(200);
    expect((await json.json()).openapi).toBe('3.1.0');
    const yaml = await h.fetch('/openapi.yaml');
    expect(yaml.headers.get('content-type')).toMatch(/yaml/);
    expect(await yaml.text()).toMatch(/^openapi: 3\.1\.0/);
  });

  it('answers /healthz and /readyz without a key, with an X-Request-Id like every answer', async () => {
    const health = await h.fetch('/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toMatch(UUID);
    const ready = await h.fetch('/readyz');
    expect(ready.status).toBe(200);
    expect((await ready.json()).checks.keys).toBe(true);
  });

  it('answers /docs with a 503 ErrorInfo when the page was not built', async () => {
    const res = await inject((await createApp({ ...h.composition.deps, docsPage: () => null })).callback(), '/docs');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ path: '/docs', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'documentation page not built: run `make docs`' });
    expect(res.headers['x-request-id']).toBe(res.body.requestId);
  });

  it('counts requests by operationId and status in /metrics', async () => {
    await h.call('/api/v1/bic/DEUTDEFF');
    const text = await (await h.fetch('/metrics')).text();
    expect(text).toMatch(/http_requests_total\{operationId="validateBic",status="200"\} \d+/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0.005",operationId="validateBic",status="200"\}/);
  });

  it('exposes the checks of /readyz as readiness_check gauges; no Redis counter without Redis', async () => {
    const text = await (await h.fetch('/metrics')).text();
    expect(text).toMatch(/^readiness_check\{check="keys"\} 1$/m);
    expect(text).toMatch(/^readiness_check\{check="limits"\} 1$/m);
    expect(text).toMatch(/^readiness_check\{check="geoip"\} [01]$/m);
    expect(text).not.toContain('limits_counted_alone_total');
  });

  it('types every metric named *_total as a counter (Prometheus naming)', async () => {
    const text = await (await h.fetch('/metrics')).text();
    const typed = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => [name, type]);
    expect(typed.filter(([name]) => name.endsWith('_total')).map(([name]) => name)).toEqual(expect.arrayContaining(['http_requests_total', 'cache_hits_total', 'cache_misses_total']));
    for (const [name, type] of typed) if (name.endsWith('_total')) expect(type, name).toBe('counter');
  });
});

describe('draining', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After once shutdown has begun', async () => {
    // The last test of this file to use the harness: draining does not end.
    h.composition.beginDrain();
    const res = await h.call('/api/v1/bic/DEUTDEFF');
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('ApiError', () => {
  it('carries retryAfter into the body', async () => {
    const { errorReply } = await import('../../src/error-answers.js');
    const { body } = errorReply(new ApiError(429, 'RATE_LIMIT_EXCEEDED', 'slow down', { retryAfter: 7 }), '/x', 'id');
    expect(body.retryAfter).toBe(7);
  });
});
