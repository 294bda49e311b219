// Rate limits and quotas on the embedded store (SQLite under a temp DATA_DIR): 429s, headers, restarts, UTC boundaries.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KeyRecord } from '../../src/adapters/keys/key-store.js';
import { createSqliteCounters, type SqliteCounterStore } from '../../src/adapters/limits/sqlite-counters.js';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { ApiError } from '../../src/errors.js';
import { errorReply } from '../../src/error-answers.js';
import type { Limiter as CountingLimiter } from '../../src/accounts/limits.js';
import { createLimiter, type LimitValues } from '../../src/accounts/limiter.js';
import { CalendarLimiter } from '../../src/adapters/limits/local-counters.js';
import { createAccountOperations as createUsageOperations } from '../../src/operations/account.js';
import { uncountedOperations } from '../../src/http/api.js';
import { loadSpec } from '../../src/http/spec.js';
import { testKeyRecord } from '../support/key-records.js';

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0); // 2026-11-22T12:00:00Z
const DEFAULTS: LimitValues = { perMinute: 100, perDay: 100, perMonth: 1000 };

const keyRecord = testKeyRecord;

interface Env {
  dir: string;
  clock: { t: number };
  limiter: CountingLimiter;
  counters: SqliteCounterStore;
  /** Close everything (flushing) and open the same DATA_DIR again, as a restarted server would. */
  restart(): Promise<Env>;
}
const open: Array<{ limiter: CountingLimiter; db: ReturnType<typeof openDatabase> }> = [];
const dirs: string[] = [];

function embedded(defaults: LimitValues = DEFAULTS, dir = mkdtempSync(join(tmpdir(), 'vls-limits-')), clock = { t: NOON }): Env {
  if (!dirs.includes(dir)) dirs.push(dir);
  const db = openDatabase(dir);
  const now = () => clock.t;
  // A long flush interval: the tests flush explicitly (close() flushes too).
  const counters = createSqliteCounters({ db, flushMs: 60_000 });
  const limiter = createLimiter({ defaults, counters, now });
  const entry = { limiter, db };
  open.push(entry);
  return {
    dir,
    clock,
    limiter,
    counters,
    async restart() {
      await limiter.close();
      db.close();
      open.splice(open.indexOf(entry), 1);
      return embedded(defaults, dir, clock);
    },
  };
}

afterEach(async () => {
  vi.useRealTimers();
  for (const { limiter, db } of open.splice(0)) {
    await limiter.close();
    if (db.open) db.close();
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

async function consumeTimes(limiter: CountingLimiter, key: KeyRecord, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await limiter.consume(key);
}

describe('consume(key, points): a bulk request of N items counts N, all or nothing', () => {
  it('counts the points in every window', async () => {
    const { limiter } = embedded({ perMinute: 10, perDay: 20, perMonth: 30 });
    const { headers } = await limiter.consume(keyRecord(), 4);
    expect(headers).toMatchObject({ 'RateLimit-Remaining': '6', 'X-Quota-Daily-Remaining': '16', 'X-Quota-Monthly-Remaining': '26' });
  });

  it('refuses points that do not fit whole, says how many fit, and counts none of them', async () => {
    const { limiter } = embedded({ perMinute: 100, perDay: 10, perMonth: 1000 });
    const key = keyRecord();
    await limiter.consume(key, 3);
    const err = await refusal(limiter.consume(key, 8));
    expect(err.code).toBe('DAILY_QUOTA_EXCEEDED');
    expect(err.message).toContain('7 of the 8 items would fit now');
    expect(err.details).toEqual([{ field: 'items', message: '8 items need 8 requests of the limits; 7 would fit now' }]);
    expect(err.headers['X-Quota-Daily-Remaining']).toBe('7');
    // Exactly what was said to fit still passes, and then nothing.
    expect((await limiter.consume(key, 7)).headers['X-Quota-Daily-Remaining']).toBe('0');
    expect((await refusal(limiter.consume(key))).message).not.toContain('items');
  });

  it('takes only a positive whole number of points', async () => {
    const { limiter } = embedded();
    for (const points of [0, -1, 1.5, Number.NaN]) await expect(limiter.consume(keyRecord(), points)).rejects.toThrow(RangeError);
  });
});

describe('429 refusals', () => {
  it.each([
    {
      code: 'RATE_LIMIT_EXCEEDED',
      limits: { perMinute: 2, perDay: 100, perMonth: 1000 },
      message: /try again later/,
      retryAfter: (r: number) => r >= 1 && r <= 60,
      headers: { 'RateLimit-Limit': '2', 'RateLimit-Remaining': '0', 'X-Quota-Daily-Remaining': '98', 'X-Quota-Monthly-Remaining': '998' },
    },
    {
      code: 'DAILY_QUOTA_EXCEEDED',
      limits: { perMinute: 100, perDay: 2, perMonth: 1000 },
      message: /daily quota of 2 requests/,
      retryAfter: (r: number) => r === 12 * 3600, // noon to midnight UTC
      headers: { 'RateLimit-Limit': '100', 'RateLimit-Remaining': '98', 'X-Quota-Daily-Remaining': '0', 'X-Quota-Monthly-Remaining': '998' },
    },
    {
      code: 'QUOTA_EXCEEDED',
      limits: { perMinute: 100, perDay: 100, perMonth: 2 },
      message: /monthly quota of 2 requests/,
      retryAfter: (r: number) => r === 8 * 86400 + 12 * 3600, // to 2026-12-01T00:00Z
      headers: { 'RateLimit-Limit': '100', 'RateLimit-Remaining': '98', 'X-Quota-Daily-Remaining': '98', 'X-Quota-Monthly-Remaining': '0' },
    },
  ])('$code: 429 with Retry-After, limit headers and retryAfter in the body', async ({ code, limits, message, retryAfter, headers }) => {
    const { limiter } = embedded(limits);
    const key = keyRecord();
    await consumeTimes(limiter, key, 2);
    const err = await refusal(limiter.consume(key));

    expect(err.status).toBe(429);
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
    expect(retryAfter(err.retryAfter!)).toBe(true);
    expect(err.headers).toMatchObject({ ...headers, 'Retry-After': String(err.retryAfter) });
    expect(Number(err.headers['RateLimit-Reset'])).toBeGreaterThan(0);
    expect(errorReply(err, '/api/v1/bic/DEUTDEFF', 'req-1').body).toMatchObject({
      status: 429,
      code,
      retryAfter: err.retryAfter,
      message: err.message,
      error: err.message,
      details: [],
    });
  });
});

describe('headers on success', () => {
  it('carry the per-minute window (IETF RateLimit fields) and both quotas', async () => {
    const { limiter } = embedded({ perMinute: 10, perDay: 50, perMonth: 500 });
    const key = keyRecord();
    await limiter.consume(key);
    const { headers } = await limiter.consume(key);
    expect(headers).toEqual({
      'RateLimit-Limit': '10',
      'RateLimit-Remaining': '8',
      'RateLimit-Reset': '60',
      'X-Quota-Daily-Remaining': '48',
      'X-Quota-Monthly-Remaining': '498',
    });
  });
});

describe('refused requests consume nothing', () => {
  it.each([
    { refusedBy: 'minute', limits: { perMinute: 2, perDay: 100, perMonth: 1000 } },
    { refusedBy: 'day', limits: { perMinute: 100, perDay: 2, perMonth: 1000 } },
    { refusedBy: 'month', limits: { perMinute: 100, perDay: 100, perMonth: 2 } },
  ])('a request refused by the $refusedBy window leaves every window as it was', async ({ limits }) => {
    const { limiter } = embedded(limits);
    const key = keyRecord();
    await consumeTimes(limiter, key, 2);
    await refusal(limiter.consume(key));
    await refusal(limiter.consume(key));
    const { usage } = await limiter.peek(key);
    expect([usage.minute.used, usage.day.used, usage.month.used]).toEqual([2, 2, 2]);
  });
});

describe('per-key limits', () => {
  it.each([
    { field: 'perMinute', code: 'RATE_LIMIT_EXCEEDED' },
    { field: 'perDay', code: 'DAILY_QUOTA_EXCEEDED' },
    { field: 'perMonth', code: 'QUOTA_EXCEEDED' },
  ] as const)("a key's own $field (lower than the default) is the one enforced", async ({ field, code }) => {
    const { limiter } = embedded();
    const key = keyRecord({ [field]: 1 });
    await limiter.consume(key);
    expect((await refusal(limiter.consume(key))).code).toBe(code);
  });

  it("a key's own limit above the default lets it go past the default", async () => {
    const { limiter } = embedded({ perMinute: 1, perDay: 1, perMonth: 1 });
    const key = keyRecord({ perMinute: 3, perDay: 3, perMonth: 3 });
    await consumeTimes(limiter, key, 3);
    expect((await refusal(limiter.consume(key))).code).toBe('QUOTA_EXCEEDED'); // all three full: the month lasts longest
  });

  it.each([
    { exhausted: 'minute and day', limits: { perMinute: 2, perDay: 2, perMonth: 100 }, code: 'DAILY_QUOTA_EXCEEDED', retryAfter: 12 * 3600 },
    { exhausted: 'day and month', limits: { perMinute: 100, perDay: 2, perMonth: 2 }, code: 'QUOTA_EXCEEDED', retryAfter: 8 * 86400 + 12 * 3600 },
    { exhausted: 'minute, day and month', limits: { perMinute: 2, perDay: 2, perMonth: 2 }, code: 'QUOTA_EXCEEDED', retryAfter: 8 * 86400 + 12 * 3600 },
    { exhausted: 'minute only', limits: { perMinute: 2, perDay: 3, perMonth: 3 }, code: 'RATE_LIMIT_EXCEEDED', retryAfter: 60 },
  ])('$exhausted exhausted: the answer names the window that resets last ($code)', async ({ limits, code, retryAfter }) => {
    const { limiter } = embedded(limits);
    const key = keyRecord();
    await consumeTimes(limiter, key, 2);
    const err = await refusal(limiter.consume(key));
    expect([err.code, err.retryAfter]).toEqual([code, retryAfter]);
  });

  it("a key's changed limit (keys update) applies from its next request, with the same counts", async () => {
    const { limiter } = embedded({ perMinute: 100, perDay: 100, perMonth: 1000 });
    const key = keyRecord({ perMinute: 2 });
    await consumeTimes(limiter, key, 2);
    expect((await refusal(limiter.consume(key))).code).toBe('RATE_LIMIT_EXCEEDED');
    const raised = { ...key, perMinute: 5 };
    const { headers } = await limiter.consume(raised);
    expect(headers['RateLimit-Limit']).toBe('5');
    expect(headers['RateLimit-Remaining']).toBe('2');
    const lowered = { ...key, perMinute: 3 };
    expect((await refusal(limiter.consume(lowered))).code).toBe('RATE_LIMIT_EXCEEDED');
  });

  it('keys are counted separately', async () => {
    const { limiter } = embedded({ perMinute: 100, perDay: 1, perMonth: 100 });
    await limiter.consume(keyRecord());
    await expect(limiter.consume(keyRecord())).resolves.toHaveProperty('headers');
  });
});

describe('persistence (SQLite under DATA_DIR)', () => {
  it('daily and monthly counts survive a restart: no fresh quota', async () => {
    const env = embedded({ perMinute: 100, perDay: 3, perMonth: 1000 });
    const key = keyRecord();
    await consumeTimes(env.limiter, key, 3);
    const restarted = await env.restart();
    expect((await refusal(restarted.limiter.consume(key))).code).toBe('DAILY_QUOTA_EXCEEDED');
    const { usage } = await restarted.limiter.peek(key);
    expect([usage.day.used, usage.month.used]).toEqual([3, 3]);
  });

  it('consume() writes nothing itself; flush() writes the batch', async () => {
    const env = embedded();
    const key = keyRecord();
    await consumeTimes(env.limiter, key, 5);
    const db = openDatabase(env.dir);
    const row = db.prepare('SELECT count FROM usage_counters WHERE counter_key = ?');
    try {
      expect(row.get(`{${key.id}}:d:2026-11-22`)).toBeUndefined();
      await env.counters.flush();
      expect(row.get(`{${key.id}}:d:2026-11-22`)).toEqual({ count: 5 });
    } finally {
      db.close();
    }
  });

  it('reports healthy', () => {
    expect(embedded().limiter.healthy()).toBe(true);
  });
});

describe('windows reset at the boundary (injected clock)', () => {
  it.each([
    {
      window: 'day',
      limits: { perMinute: 100, perDay: 1, perMonth: 1000 },
      before: Date.UTC(2026, 10, 22, 23, 59, 59, 999),
      after: Date.UTC(2026, 10, 23, 0, 0, 0, 0),
      code: 'DAILY_QUOTA_EXCEEDED',
    },
    {
      window: 'month',
      limits: { perMinute: 100, perDay: 100, perMonth: 1 },
      before: Date.UTC(2026, 10, 30, 23, 59, 59, 999),
      after: Date.UTC(2026, 11, 1, 0, 0, 0, 0),
      code: 'QUOTA_EXCEEDED',
    },
    {
      window: 'month (December to January)',
      limits: { perMinute: 100, perDay: 100, perMonth: 1 },
      before: Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      after: Date.UTC(2027, 0, 1, 0, 0, 0, 0),
      code: 'QUOTA_EXCEEDED',
    },
  ])('the $window quota refuses until 00:00 UTC, then counts afresh', async ({ limits, before, after, code }) => {
    const env = embedded(limits, undefined, { t: before });
    const key = keyRecord();
    await env.limiter.consume(key);
    const err = await refusal(env.limiter.consume(key));
    expect([err.code, err.retryAfter]).toEqual([code, 1]);
    env.clock.t = after;
    await expect(env.limiter.consume(key)).resolves.toHaveProperty('headers');
  });

  it('the day quota does not reset at midnight of another time zone', async () => {
    const env = embedded({ perMinute: 100, perDay: 1, perMonth: 1000 }, undefined, { t: Date.UTC(2026, 10, 22, 0, 30) });
    const key = keyRecord();
    await env.limiter.consume(key);
    env.clock.t = Date.UTC(2026, 10, 22, 22, 30); // midnight in UTC+1:30 and beyond
    expect((await refusal(env.limiter.consume(key))).code).toBe('DAILY_QUOTA_EXCEEDED');
  });

  it('the per-minute window reopens 60 s after it opened (fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const { limiter } = embedded({ perMinute: 1, perDay: 100, perMonth: 1000 });
    const key = keyRecord();
    await limiter.consume(key);
    vi.advanceTimersByTime(59_000);
    const err = await refusal(limiter.consume(key));
    expect([err.code, err.retryAfter]).toEqual(['RATE_LIMIT_EXCEEDED', 1]);
    vi.advanceTimersByTime(1_000);
    await expect(limiter.consume(key)).resolves.toHaveProperty('headers');
  });
});

describe('GET /api/v1/usage', () => {
  /** openapi-backend's context: the ApiKey security handler's result is the key. */
  const request = (key?: KeyRecord): any => ({
    request: { params: {}, query: {}, requestBody: undefined, headers: {}, ip: '127.0.0.1' },
    security: { ApiKey: key, authorized: key !== undefined },
  });

  it('returns limits, usage and reset times per window', async () => {
    const { limiter } = embedded({ perMinute: 10, perDay: 50, perMonth: 500 });
    const key = keyRecord({ perDay: 40 });
    await consumeTimes(limiter, key, 3);
    const reply = await createUsageOperations({ limiter }).getUsage(request(key));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      keyId: key.id,
      minute: { limit: 10, used: 3, remaining: 7, resetAt: expect.any(String), resetInSeconds: 60 },
      day: { limit: 40, used: 3, remaining: 37, resetAt: '2026-11-23T00:00:00.000Z', resetInSeconds: 12 * 3600 },
      month: { limit: 500, used: 3, remaining: 497, resetAt: '2026-12-01T00:00:00.000Z', resetInSeconds: 8 * 86400 + 12 * 3600 },
      smtpDay: { limit: 1000, used: 0, remaining: 1000, resetAt: '2026-11-23T00:00:00.000Z', resetInSeconds: 12 * 3600 },
    });
    expect(reply.headers).toMatchObject({ 'RateLimit-Remaining': '7', 'X-Quota-Daily-Remaining': '37' });
  });

  it('does not count, and answers while a quota is exhausted', async () => {
    const { limiter } = embedded({ perMinute: 100, perDay: 1, perMonth: 1000 });
    const { getUsage } = createUsageOperations({ limiter });
    const key = keyRecord();
    await limiter.consume(key);
    await getUsage(request(key));
    const reply = await getUsage(request(key));
    expect([reply.body.minute.used, reply.body.day.used, reply.body.day.remaining]).toEqual([1, 1, 0]);
    expect(uncountedOperations((await loadSpec()).document).has('getUsage')).toBe(true);
  });

  it('a fresh key shows a full per-minute window', async () => {
    const { limiter } = embedded();
    const { body } = await createUsageOperations({ limiter }).getUsage(request(keyRecord()));
    expect(body.minute).toMatchObject({ used: 0, remaining: 100, resetInSeconds: 60 });
  });

  it('refuses to run without the authenticated key on the request', async () => {
    const { limiter } = embedded();
    await expect(createUsageOperations({ limiter }).getUsage(request())).rejects.toThrow(/authenticated key/);
  });
});

describe('calendar counters in memory (rate-limiter-flexible RateLimiterMemory)', () => {
  it("a monthly counter outlives Node's longest timer (24.8 days): counted the 1st, still there the 27th", async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: Date.UTC(2026, 11, 1) });
    const calendar = new CalendarLimiter();
    await calendar.consume('{k}:m:2026-12', 1, { customDuration: 31 * 86400 });
    vi.advanceTimersByTime(26 * 86400_000);
    expect((await calendar.get('{k}:m:2026-12'))?.consumedPoints).toBe(1);
  });

  it('forgets a counter once its period has ended (prune), not before', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: NOON });
    const calendar = new CalendarLimiter();
    await calendar.consume('{k}:d:2026-11-22', 1, { customDuration: 12 * 3600 });
    calendar.prune(Date.now() + 12 * 3600_000 - 1);
    expect(calendar.size).toBe(1);
    calendar.prune(Date.now() + 12 * 3600_000);
    expect([calendar.size, await calendar.get('{k}:d:2026-11-22')]).toEqual([0, null]);
  });

  it.each([
    { window: 'minute', limits: { perMinute: 10, perDay: 1000, perMonth: 5000 } },
    { window: 'day', limits: { perMinute: 60, perDay: 10, perMonth: 5000 } },
    { window: 'month', limits: { perMinute: 60, perDay: 1000, perMonth: 10 } },
  ])('300 concurrent requests against 10 per $window: exactly 10 admitted, the rest count nothing', async ({ limits }) => {
    const { limiter } = embedded(limits);
    const key = keyRecord();
    const settled = await Promise.allSettled(Array.from({ length: 300 }, () => limiter.consume(key)));
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(10);
    const { usage } = await limiter.peek(key);
    expect([usage.minute.used, usage.day.used, usage.month.used]).toEqual([10, 10, 10]);
  });
});
