// Rate limit and quotas over HTTP (embedded store): headers on every answer, each 429 code, the usage endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ RATE_LIMIT_PER_MINUTE: '3', QUOTA_PER_DAY: '1000', QUOTA_PER_MONTH: '5000' });
});
afterAll(() => h.close());

async function keyWith(limits: { perMinute?: number; perDay?: number; perMonth?: number }) {
  const { record, key } = await h.composition.keyStore.create({ name: 'limited', ...limits });
  await h.composition.keys.refresh();
  return { id: record.id, key };
}

describe('limit headers', () => {
  it('carries the per-minute window and both quotas on every authenticated answer', async () => {
    const { key } = await keyWith({});
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(res.headers.get('ratelimit-limit')).toBe('3');
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
    expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(res.headers.get('x-quota-daily-remaining')).toBe('999');
    expect(res.headers.get('x-quota-monthly-remaining')).toBe('4999');
  });

  it('counts a 400 answer too', async () => {
    const { key } = await keyWith({});
    expect((await h.call('/api/v1/bic/%24', { key })).status).toBe(400);
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(res.headers.get('ratelimit-remaining')).toBe('1');
  });

  it.each([
    ['an unknown path', '/api/v1/nope', {}, 404],
    ['a method the path does not allow', '/api/v1/bic/DEUTDEFF', { method: 'DELETE' }, 405],
  ])('does not count %s (answered before the key is checked)', async (_, path, init, status) => {
    const { key } = await keyWith({});
    expect((await h.call(path, { key, ...init })).status).toBe(status);
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
  });
});

describe('429 answers', () => {
  it('refuses the fourth request in a minute with RATE_LIMIT_EXCEEDED, Retry-After and retryAfter', async () => {
    const { key } = await keyWith({});
    for (let i = 0; i < 3; i++) expect((await h.call('/api/v1/bic/DEUTDEFF', { key })).status).toBe(200);
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(res.status).toBe(429);
    expect(res.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(res.body.message).toMatch(/try again later/);
    expect(res.body.retryAfter).toBeGreaterThan(0);
    expect(res.headers.get('retry-after')).toBe(String(res.body.retryAfter));
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('refuses with DAILY_QUOTA_EXCEEDED once the key daily quota is used', async () => {
    const { key } = await keyWith({ perMinute: 100, perDay: 2 });
    await h.call('/api/v1/bic/DEUTDEFF', { key });
    await h.call('/api/v1/bic/DEUTDEFF', { key });
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(res.status).toBe(429);
    expect(res.body.code).toBe('DAILY_QUOTA_EXCEEDED');
    expect(res.headers.get('x-quota-daily-remaining')).toBe('0');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses with QUOTA_EXCEEDED once the key monthly quota is used', async () => {
    const { key } = await keyWith({ perMinute: 100, perDay: 100, perMonth: 1 });
    await h.call('/api/v1/bic/DEUTDEFF', { key });
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(res.status).toBe(429);
    expect(res.body.code).toBe('QUOTA_EXCEEDED');
  });

  it.each([
    { given: 'a body that is not JSON', body: '{"cardNumber": ', want: 'INVALID_FORMAT', status: 400 },
    { given: 'a body over 16 KiB', body: JSON.stringify({ cardNumber: '4'.repeat(17 * 1024) }), want: 'VALIDATION_ERROR', status: 413 },
  ])('answers 429, not $status, to a refused request with $given (limits before the body)', async ({ body, want }) => {
    const { key } = await keyWith({ perMinute: 1 });
    const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body, key };
    expect((await h.call('/api/v1/creditcard/validate', post)).body.code).toBe(want); // counted, then refused
    const res = await h.call('/api/v1/creditcard/validate', post);
    expect(res.status).toBe(429);
    expect(res.body.code).toBe('RATE_LIMIT_EXCEEDED');
  });

  it('answers 401, not 400, to a request with no key and a body that is not JSON', async () => {
    const res = await h.call('/api/v1/creditcard/validate', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"cardNumber": ',
      key: null,
    });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
  });

  it('consumes nothing for a request refused for authentication', async () => {
    const { id, key } = await keyWith({});
    await h.composition.keyStore.setStatus(id, 'inactive');
    await h.composition.keys.refresh();
    for (let i = 0; i < 5; i++) expect((await h.call('/api/v1/bic/DEUTDEFF', { key })).status).toBe(403);
    await h.composition.keyStore.setStatus(id, 'active');
    await h.composition.keys.refresh();
    const res = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
  });
});

describe('GET /api/v1/usage', () => {
  it('shows limits and usage without counting itself', async () => {
    const { id, key } = await keyWith({ perDay: 50 });
    await h.call('/api/v1/bic/DEUTDEFF', { key });
    const first = await h.call('/api/v1/usage', { key });
    const second = await h.call('/api/v1/usage', { key });
    expect(first.status).toBe(200);
    expect(second.body).toMatchObject({
      keyId: id,
      minute: { limit: 3, used: 1, remaining: 2 },
      day: { limit: 50, used: 1, remaining: 49 },
      month: { limit: 5000, used: 1 },
    });
    expect(second.body.day.resetAt).toMatch(/T00:00:00\.000Z$/);
    expect(second.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('answers even while the per-minute limit is exhausted', async () => {
    const { key } = await keyWith({});
    for (let i = 0; i < 4; i++) await h.call('/api/v1/bic/DEUTDEFF', { key });
    const res = await h.call('/api/v1/usage', { key });
    expect(res.status).toBe(200);
    expect(res.body.minute.remaining).toBe(0);
  });

  it('answers 404 when the server runs with RATE_LIMITS=off, and sends no limit headers', async () => {
    const off = await startHarness({ RATE_LIMITS: 'off' });
    try {
      expect((await off.call('/api/v1/usage')).status).toBe(404);
      const res = await off.call('/api/v1/bic/DEUTDEFF');
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    } finally {
      await off.close();
    }
  });
});

describe('restart', () => {
  it.each([
    { window: 'daily', env: { QUOTA_PER_DAY: '3' } as Record<string, string>, header: 'x-quota-daily-remaining', code: 'DAILY_QUOTA_EXCEEDED' },
    { window: 'monthly', env: { QUOTA_PER_DAY: '100', QUOTA_PER_MONTH: '3' }, header: 'x-quota-monthly-remaining', code: 'QUOTA_EXCEEDED' },
  ])('keeps the $window count across a restart of the server on the same DATA_DIR', async ({ env, header, code }) => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'vls-restart-'));
    const a = await startHarness({ DATA_DIR: dir, ...env });
    const key = a.key;
    await a.call('/api/v1/bic/DEUTDEFF');
    await a.call('/api/v1/bic/DEUTDEFF');
    await a.close();
    const b = await startHarness({ DATA_DIR: dir, ...env });
    try {
      const res = await b.call('/api/v1/bic/DEUTDEFF', { key });
      expect(res.headers.get(header)).toBe('0');
      expect((await b.call('/api/v1/bic/DEUTDEFF', { key })).body.code).toBe(code);
    } finally {
      await b.close();
    }
  });
});
