// The request pipeline in-process through app.callback() (no port): one behaviour per test, for every hook of the API.
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { KeyRecord, KeyStore } from '../../src/adapters/keys/key-store.js';
import { hashKey } from '../../src/adapters/keys/key-store.js';
import { createApp, type AppDeps } from '../../src/app.js';
import { ApiError, serviceUnavailable } from '../../src/errors.js';
import { KeyDirectory } from '../../src/accounts/key-directory.js';
import { createLogger } from '../../src/http/logging.js';
import { createMetrics } from '../../src/http/metrics.js';
import { loadSpec, type Spec } from '../../src/http/spec.js';
import type { Handlers } from '../../src/operations/types.js';
import { inject, type InjectOptions } from '../support/inject.js';
import { testKeyRecord } from '../support/key-records.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const KEY = 'good-key-0123456789';
const LIMIT_HEADERS = { 'RateLimit-Limit': '60', 'RateLimit-Remaining': '59', 'RateLimit-Reset': '60', 'X-Quota-Daily-Remaining': '9', 'X-Quota-Monthly-Remaining': '99' };

let spec: Spec;
let record: KeyRecord;
let keys: KeyDirectory;
let logs: string[];
let consumed: string[];
let calls: { operationId: string; context: any }[];
let refuse: ApiError | null;

beforeAll(async () => {
  spec = await loadSpec();
  record = testKeyRecord({ hash: hashKey(KEY) });
  const revoked = testKeyRecord({ hash: hashKey('revoked-key'), status: 'revoked' });
  const byHash = new Map([record, revoked].map((k) => [k.hash, k]));
  const store = {
    findByHash: async (hash: string) => byHash.get(hash) ?? null,
    changes: async () => ({ cursor: '1', hashes: [], reset: false }),
  } as unknown as KeyStore;
  keys = new KeyDirectory({ store });
  await keys.refresh();
});

beforeEach(() => {
  logs = [];
  consumed = [];
  calls = [];
  refuse = null;
});

/** Every operation answers what it was given: the pipeline, not the operations, is under test here. */
function echoHandlers(): Handlers {
  const handlers: Record<string, unknown> = {};
  for (const item of Object.values<any>(spec.document.paths)) {
    for (const op of Object.values<any>(item)) {
      if (op.tags?.includes('System')) continue; // served by @koa/router, not by a handler (openapi.yaml System tag)
      handlers[op.operationId] = (context: any) => {
        calls.push({ operationId: op.operationId, context });
        return { status: 200, body: { seen: true } };
      };
    }
  }
  return handlers as unknown as Handlers;
}

let shared: ReturnType<typeof build> | null = null;
/** The app of the default deps is built once (openapi-backend compiles its validators lazily, per operation). */
async function app(over: Partial<AppDeps> = {}) {
  if (Object.keys(over).length) return build(over);
  return (shared ??= build({}));
}

async function build(over: Partial<AppDeps>) {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const deps: AppDeps = {
    handlers: echoHandlers(),
    keys,
    limiter: {
      consume: async (key) => {
        consumed.push(key.id);
        if (refuse) throw refuse;
        return { headers: LIMIT_HEADERS };
      },
    },
    logger: createLogger('info', sink),
    metrics: createMetrics({ defaults: false }),
    draining: () => false,
    spec,
    docsPage: () => null,
    readiness: () => ({ keys: true }),
    ...over,
  };
  return (await createApp(deps)).callback();
}

const call = async (path: string, opts: InjectOptions & { key?: string | null } = {}, over: Partial<AppDeps> = {}) => {
  const headers = { ...opts.headers };
  const key = opts.key === undefined ? KEY : opts.key;
  if (key !== null) headers['x-api-key'] = key;
  return inject(await app(over), path, { ...opts, headers });
};
const json = { 'content-type': 'application/json' };

describe('preRoutingHandler', () => {
  it('serves until shutdown begins, then answers every API request 503 with Connection: close', async () => {
    let draining = false;
    const one = await build({ draining: () => draining });
    const headers = { 'x-api-key': KEY };
    const served = await inject(one, '/api/v1/bic/DEUTDEFF', { headers });
    expect(served.status).toBe(200);
    draining = true;
    for (const path of ['/api/v1/bic/DEUTDEFF', '/api/v1/nowhere']) {
      const res = await inject(one, path, { headers });
      expect(res.status, path).toBe(503);
      expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.headers.connection).toBe('close');
    }
  });

  it('answers a request in flight when shutdown begins with Connection: close', async () => {
    let draining = false;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const validateBic = async () => {
      entered();
      await gate;
      return { status: 200, body: {} };
    };
    const answered = call('/api/v1/bic/DEUTDEFF', {}, { handlers: { ...echoHandlers(), validateBic } as unknown as Handlers, draining: () => draining });
    await inside;
    draining = true;
    release();
    const res = await answered;
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('close');
  });

  it('answers 503 with Retry-After once shutdown has begun, before routing', async () => {
    const res = await call('/api/v1/nowhere', {}, { draining: () => true });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('5');
  });
});

describe('notFound', () => {
  it('answers 404 RESOURCE_NOT_FOUND for an unknown path, before the key is checked and without counting', async () => {
    const res = await call('/api/v1/nothing', { key: null });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'RESOURCE_NOT_FOUND', path: '/api/v1/nothing' });
    expect(consumed).toEqual([]);
  });
});

describe('methodNotAllowed', () => {
  it('answers 405 with Allow naming the methods of the path', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(consumed).toEqual([]);
  });
});

describe('ApiKey security handler and unauthorizedHandler', () => {
  it('answers 401 with requestId null, no X-Request-Id and a WWW-Authenticate naming the header (RFC 9110 11.6.1)', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF', { key: null });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', requestId: null });
    expect(res.headers['x-request-id']).toBeUndefined();
    expect(res.headers['www-authenticate']).toBe('ApiKey header="X-Api-Key"');
  });

  it('counts an empty X-Api-Key as absent: 401', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF', { key: '' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('ApiKey header="X-Api-Key"');
  });

  it('answers 403 FORBIDDEN for a revoked key, with a request id and no WWW-Authenticate', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF', { key: 'revoked-key' });
    expect(res.status).toBe(403);
    expect(res.body.requestId).toBe(res.headers['x-request-id']);
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('answers 503 with Retry-After when the key store cannot be reached, without counting', async () => {
    const down = { authenticate: () => Promise.reject(serviceUnavailable('the key store cannot be reached: try again shortly')) };
    const res = await call('/api/v1/bic/DEUTDEFF', {}, { keys: down });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: res.headers['x-request-id'] });
    expect(res.headers['retry-after']).toBe('1');
    expect(consumed).toEqual([]);
    expect(logs.some((l) => l.includes('unexpected error'))).toBe(false);
  });

  it('answers a fault in authentication with 500 INTERNAL_ERROR, logged with its operation and error', async () => {
    const broken = { authenticate: () => Promise.reject(new TypeError('secret detail of the store')) };
    const res = await call('/api/v1/bic/DEUTDEFF', {}, { keys: broken });
    expect(res.body).toMatchObject({ status: 500, code: 'INTERNAL_ERROR', message: 'internal server error' });
    expect(res.text).not.toContain('secret');
    expect(JSON.parse(logs.find((l) => l.includes('unexpected error'))!)).toMatchObject({ operationId: 'validateBic', err: { name: 'TypeError' }, requestId: res.body.requestId });
  });
});

describe('postSecurityHandler (limits)', () => {
  it('counts an authenticated request once and sends the limit headers', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF');
    expect(consumed).toEqual([record.id]);
    expect(res.headers['ratelimit-remaining']).toBe('59');
  });

  it('counts before validation: a malformed request of a known key counts and carries the headers', async () => {
    const res = await call('/api/v1/bic/' + 'A'.repeat(65));
    expect(res.status).toBe(400);
    expect(consumed).toEqual([record.id]);
    expect(res.headers['x-quota-daily-remaining']).toBe('9');
  });

  it('does not count an operation marked x-counted: false in openapi.yaml (GET /api/v1/usage)', async () => {
    const res = await call('/api/v1/usage');
    expect(res.status).toBe(200);
    expect(consumed).toEqual([]);
    expect(calls[0].context.security.ApiKey.id).toBe(record.id);
  });

  it('answers a limiter refusal (429) without running the operation', async () => {
    refuse = new ApiError(429, 'RATE_LIMIT_EXCEEDED', 'slow down', { retryAfter: 7 });
    const res = await call('/api/v1/bic/DEUTDEFF');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(calls).toEqual([]);
  });
});

describe('validationFail', () => {
  it('names a missing query parameter: 400 MISSING_PARAMETER', async () => {
    const res = await call('/api/v1/email');
    expect(res.body).toMatchObject({ status: 400, code: 'MISSING_PARAMETER', message: 'parameter address is required' });
  });

  it('names a missing body field: 400 MISSING_PARAMETER', async () => {
    const res = await call('/api/v1/creditcard/validate', { method: 'POST', headers: json, body: '{}' });
    expect(res.body).toMatchObject({ code: 'MISSING_PARAMETER', details: [{ field: 'cardNumber', message: 'is required' }] });
  });

  it('treats an empty POST body as an object without the field', async () => {
    const res = await call('/api/v1/password/strength', { method: 'POST' });
    expect(res.body).toMatchObject({ code: 'MISSING_PARAMETER', details: [{ field: 'password', message: 'is required' }] });
  });

  it.each([
    ['a card number as a JSON number', '/api/v1/creditcard/validate', '{"cardNumber":4111111111111111}', '4111111111111111'],
    ['a password as an array', '/api/v1/password/strength', '{"password":["hunter2-secret"]}', 'hunter2'],
    ['an empty password', '/api/v1/password/strength', '{"password":""}', 'password":'],
  ])('answers %s with 400 INVALID_FORMAT, never echoing it', async (_what, path, body, secret) => {
    const res = await call(path, { method: 'POST', headers: json, body });
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.text).not.toContain(secret);
    expect(calls).toEqual([]);
  });

  it('answers a path value over its maxLength with 400 INVALID_FORMAT naming the field', async () => {
    const res = await call('/api/v1/iban/' + 'D'.repeat(65));
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'iban' }] });
  });
});

describe('operation handlers', () => {
  it('get decoded path values, only the declared query parameters, and the peer address', async () => {
    await call('/api/v1/dns/b%C3%BCcher.de?type=MX&other=1', { remoteAddress: '192.0.2.7' });
    expect(calls[0].context.request).toMatchObject({ params: { domain: 'bücher.de' }, query: { type: 'MX' }, ip: '192.0.2.7' });
  });

  it('get the parsed JSON body, also gzip-encoded', async () => {
    await call('/api/v1/creditcard/validate', {
      method: 'POST',
      headers: { ...json, 'content-encoding': 'gzip' },
      body: gzipSync('{"cardNumber":"4012 8888 8888 1881"}'),
    });
    expect(calls[0].context.request.requestBody).toEqual({ cardNumber: '4012 8888 8888 1881' });
  });
});

describe('JSON bodies', () => {
  it.each(['4294967296', '2147483648', '9007199254740993'])('answers a Content-Length of %s with 413, not cut to 32 bits', async (length) => {
    const res = await call('/api/v1/creditcard/validate', { method: 'POST', headers: { ...json, 'content-length': length } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  it('answers malformed JSON with 400 INVALID_FORMAT without echoing it', async () => {
    const res = await call('/api/v1/password/strength', { method: 'POST', headers: json, body: '{"password":"hunter2-secret"' });
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'body', message: 'is not valid JSON' }] });
    expect(res.text).not.toContain('hunter2');
  });

  it('answers another media type with 400 INVALID_FORMAT', async () => {
    const res = await call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'body', message: 'content type must be application/json' }] });
  });

  it('answers bytes that are not UTF-8 with 400 INVALID_FORMAT', async () => {
    const res = await call('/api/v1/password/strength', { method: 'POST', headers: json, body: Buffer.from('{"password":"caf\xe9"}', 'latin1') });
    expect(res.body.details[0].message).toMatch(/not UTF-8/);
  });
});

describe('postResponseHandler and the one write step', () => {
  it('writes the reply as JSON, field names in lower case, with no-store and nosniff', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ seen: true });
    expect(res.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    expect(res.headers['x-request-id']).toMatch(UUID);
    const ours = res.names.filter((n) => !['Date', 'Connection', 'Keep-Alive'].includes(n));
    expect(ours).toEqual(ours.map((n) => n.toLowerCase()));
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(Number(res.headers['content-length'])).toBeGreaterThan(0);
    expect(res.text).toBe('');
  });

  it('turns a reply the contract does not allow into 500, logged with its operation', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF', {}, { responseCheck: { check: () => 'missing bic' } });
    expect(res.status).toBe(500);
    expect(JSON.parse(logs.find((l) => l.includes('unexpected error'))!)).toMatchObject({ operationId: 'validateBic', err: { message: 'response does not honour the contract: missing bic' }, requestId: res.body.requestId });
  });
});

describe('the error middleware', () => {
  it('answers a fault with 500 INTERNAL_ERROR, no internals, logged with its operation, error and request id', async () => {
    const handlers = { ...echoHandlers(), validateBic: () => { throw new Error('secret detail /srv/x.ts:1'); } } as unknown as Handlers;
    const res = await call('/api/v1/bic/DEUTDEFF', {}, { handlers });
    expect(res.body).toMatchObject({ status: 500, code: 'INTERNAL_ERROR', message: 'internal server error' });
    expect(res.text).not.toContain('secret');
    expect(JSON.parse(logs.find((l) => l.includes('unexpected error'))!)).toMatchObject({ operationId: 'validateBic', err: { name: 'Error' }, requestId: res.body.requestId });
  });

  it('writes one access-log line per API request with the fixed fields', async () => {
    const res = await call('/api/v1/bic/DEUTDEFF');
    const lines = logs.map((l) => JSON.parse(l)).filter((l) => l.requestId === res.headers['x-request-id']);
    expect(lines).toEqual([expect.objectContaining({ method: 'GET', route: '/api/v1/bic/{bic}', operationId: 'validateBic', status: 200, keyId: record.id })]);
  });

  it.each<[string, string, { method?: string; key?: string | null; refused?: boolean }, { status: number; route: string | null; operationId: string }]>([
    ['a missing key', '/api/v1/bic/DEUTDEFF', { key: null }, { status: 401, route: '/api/v1/bic/{bic}', operationId: 'validateBic' }],
    ['an unknown key', '/api/v1/bic/DEUTDEFF', { key: 'vls_unknownunknownunknownunknown00' }, { status: 403, route: '/api/v1/bic/{bic}', operationId: 'validateBic' }],
    ['a refused limit', '/api/v1/bic/DEUTDEFF', { refused: true }, { status: 429, route: '/api/v1/bic/{bic}', operationId: 'validateBic' }],
    ['an invalid parameter', '/api/v1/bic/DE%2BUT', {}, { status: 400, route: '/api/v1/bic/{bic}', operationId: 'validateBic' }],
    ['an unknown path', '/api/v1/nothing', {}, { status: 404, route: null, operationId: 'unmatched' }],
    ['a method the path does not allow', '/api/v1/bic/DEUTDEFF', { method: 'DELETE' }, { status: 405, route: null, operationId: 'unmatched' }],
  ])('labels the access line and the metrics of %s with the matched operation', async (_label, path, given, want) => {
    if (given.refused) refuse = new ApiError(429, 'RATE_LIMIT_EXCEEDED', 'slow down', { retryAfter: 1 });
    const metrics = createMetrics({ defaults: false, renderIntervalMs: 0 });
    const res = await call(path, { method: given.method, key: given.key }, { metrics });
    expect(res.status).toBe(want.status);
    const lines = logs.map((l) => JSON.parse(l)).filter((l) => 'durationMs' in l);
    expect(lines).toEqual([expect.objectContaining(want)]);
    expect(await metrics.render()).toContain(`http_requests_total{operationId="${want.operationId}",status="${want.status}"} 1`);
  });
});

describe('system routes on the same app', () => {
  it('answer /healthz with an X-Request-Id too', async () => {
    const res = await call('/healthz', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(UUID);
  });

  it('answer another method with 405 ErrorInfo and Allow', async () => {
    const res = await call('/readyz', { method: 'POST', key: null });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.body.requestId).toBe(res.headers['x-request-id']);
  });
});
