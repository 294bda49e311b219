// The per-key daily SMTP quota (issue #55 item 5, docs/limits.md): Limiter.consumeSmtp on both counter stores (SQLite
// under a temp DATA_DIR, a real redis-server), and a key's own `smtpPerDay` in both key stores.
// @module-tag slow (left out of make test-fast): starts redis-server
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/accounts/limiter.js';
import type { Limiter } from '../../src/accounts/limits.js';
import { createRedisKeyStore } from '../../src/adapters/keys/redis-key-store.js';
import { createSqliteKeyStore } from '../../src/adapters/keys/sqlite-key-store.js';
import { createRedisCounters } from '../../src/adapters/limits/redis-counters.js';
import { createSqliteCounters } from '../../src/adapters/limits/sqlite-counters.js';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { ApiError } from '../../src/errors.js';
import { COMMAND_TIMEOUT_MS, redisAvailable, startRedisServer, type TestRedis } from '../support/redis-server.js';
import { testKeyRecord } from '../support/key-records.js';

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);
const DEFAULTS = { perMinute: 100, perDay: 100, perMonth: 1000 };
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'vls-smtp-quota-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

function embedded(dir = tempDir(), clock = { t: NOON }, smtpPerDay = 5): Limiter {
  const db = openDatabase(dir);
  const limiter = createLimiter({ defaults: DEFAULTS, smtpPerDay, counters: createSqliteCounters({ db, flushMs: 60_000 }), now: () => clock.t });
  closers.push(async () => {
    await limiter.close();
    db.close();
  });
  return limiter;
}

const refusal = async (p: Promise<unknown>): Promise<ApiError> => {
  const err = await p.then(() => null, (e: unknown) => e);
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
};

describe('consumeSmtp on the embedded store', () => {
  it('counts each verification against SMTP_DAILY_PER_KEY and says what remains', async () => {
    const limiter = embedded();
    const key = testKeyRecord();
    expect(await limiter.consumeSmtp(key, 2)).toEqual({ limit: 5, remaining: 3 });
    expect(await limiter.consumeSmtp(key, 3)).toEqual({ limit: 5, remaining: 0 });
  });

  it('refuses what does not fit whole: 429 SMTP_QUOTA_EXCEEDED, Retry-After to 00:00 UTC, nothing counted', async () => {
    const limiter = embedded();
    const key = testKeyRecord();
    await limiter.consumeSmtp(key, 3);
    const err = await refusal(limiter.consumeSmtp(key, 4));
    expect(err).toMatchObject({ status: 429, code: 'SMTP_QUOTA_EXCEEDED', retryAfter: 12 * 3600 });
    expect(err.headers).toMatchObject({ 'Retry-After': String(12 * 3600) });
    expect(err.message).toContain('2 of the 4 addresses would fit now');
    expect(err.details).toEqual([{ field: 'items', message: '4 addresses need 4 SMTP verifications; 2 would fit now' }]);
    // The refused four were not counted: two still fit.
    expect(await limiter.consumeSmtp(key, 2)).toEqual({ limit: 5, remaining: 0 });
    expect((await refusal(limiter.consumeSmtp(key, 1))).details).toEqual([]);
  });

  it("uses the key's own smtpPerDay; 0 refuses every verification; 0 asked charges nothing", async () => {
    const limiter = embedded();
    expect(await limiter.consumeSmtp(testKeyRecord({ smtpPerDay: 50 }), 40)).toEqual({ limit: 50, remaining: 10 });
    const none = testKeyRecord({ smtpPerDay: 0 });
    expect(await limiter.consumeSmtp(none, 0)).toEqual({ limit: 0, remaining: 0 });
    expect((await refusal(limiter.consumeSmtp(none, 1))).code).toBe('SMTP_QUOTA_EXCEEDED');
    await expect(limiter.consumeSmtp(none, -1)).rejects.toThrow(RangeError);
  });

  it('SMTP_DAILY_PER_KEY=0 means no SMTP verification for keys without their own quota, not an unlimited one', async () => {
    const limiter = embedded(tempDir(), { t: NOON }, 0);
    expect((await refusal(limiter.consumeSmtp(testKeyRecord(), 1))).code).toBe('SMTP_QUOTA_EXCEEDED');
    expect(await limiter.consumeSmtp(testKeyRecord({ smtpPerDay: 3 }), 3)).toEqual({ limit: 3, remaining: 0 });
  });

  it('is a UTC day: the next day starts afresh, and a restart keeps the count', async () => {
    const dir = tempDir();
    const clock = { t: NOON };
    const key = testKeyRecord();
    const first = embedded(dir, clock);
    await first.consumeSmtp(key, 5);
    await first.close(); // flushes the counts to DATA_DIR
    const again = embedded(dir, clock);
    expect((await refusal(again.consumeSmtp(key, 1))).code).toBe('SMTP_QUOTA_EXCEEDED');
    clock.t = NOON + 12 * 3600_000; // 00:00 UTC the next day
    expect(await again.consumeSmtp(key, 1)).toEqual({ limit: 5, remaining: 4 });
  });

  it('leaves the request windows alone (its own counter)', async () => {
    const limiter = embedded();
    const key = testKeyRecord();
    await limiter.consumeSmtp(key, 5);
    const { usage } = await limiter.peek(key);
    expect([usage.minute.used, usage.day.used, usage.month.used]).toEqual([0, 0, 0]);
    expect(usage.smtpDay).toEqual({ limit: 5, used: 5, remaining: 0, resetAt: '2026-11-23T00:00:00.000Z', resetInSeconds: 12 * 3600 });
  });
});

describe('smtpPerDay in the SQLite key store', () => {
  it('is created, updated and read back; an earlier DATA_DIR gains the column', async () => {
    const dir = tempDir();
    const old = openDatabase(dir);
    // The table as the previous version created it, with one key in it.
    old.exec(`CREATE TABLE api_keys (id TEXT PRIMARY KEY, name TEXT NOT NULL, key_hash TEXT NOT NULL UNIQUE,
      status TEXT NOT NULL, per_minute INTEGER, per_day INTEGER, per_month INTEGER, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
    old.prepare("INSERT INTO api_keys VALUES ('key_old', 'old', 'h', 'active', NULL, NULL, NULL, '2026-01-01', '2026-01-01')").run();
    old.close();
    const db = openDatabase(dir);
    const store = createSqliteKeyStore(db);
    closers.push(() => store.close());
    expect(await store.get('key_old')).toMatchObject({ smtpPerDay: null });
    const { record } = await store.create({ name: 'a', smtpPerDay: 20 });
    expect(await store.get(record.id)).toMatchObject({ smtpPerDay: 20, perDay: null });
    expect(await store.updateLimits(record.id, { smtpPerDay: 0 })).toBe(true);
    expect(await store.get(record.id)).toMatchObject({ smtpPerDay: 0 });
    expect(await store.updateLimits(record.id, { smtpPerDay: null })).toBe(true);
    expect(await store.get(record.id)).toMatchObject({ smtpPerDay: null });
  });
});

describe.skipIf(!redisAvailable())('on Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('two instances share one SMTP quota, refused whole', async () => {
    const instance = async () => {
      const counters = createRedisCounters({ url: redis.url, keyPrefix: 't-smtp', commandTimeoutMs: COMMAND_TIMEOUT_MS });
      const limiter = createLimiter({ defaults: DEFAULTS, smtpPerDay: 10, counters });
      closers.push(() => limiter.close());
      await counters.ready();
      return limiter;
    };
    const [a, b] = [await instance(), await instance()];
    const key = testKeyRecord();
    expect(await a.consumeSmtp(key, 6)).toEqual({ limit: 10, remaining: 4 });
    expect((await refusal(b.consumeSmtp(key, 5))).code).toBe('SMTP_QUOTA_EXCEEDED');
    expect(await b.consumeSmtp(key, 4)).toEqual({ limit: 10, remaining: 0 });
  });

  it('the Redis key store keeps smtpPerDay through create and update', async () => {
    const store = createRedisKeyStore({ url: redis.url, keyPrefix: 't-smtp-keys:', commandTimeoutMs: COMMAND_TIMEOUT_MS });
    closers.push(() => store.close());
    await store.ready();
    const { record } = await store.create({ name: 'r', smtpPerDay: 7 });
    expect(await store.get(record.id)).toMatchObject({ smtpPerDay: 7 });
    expect(await store.updateLimits(record.id, { smtpPerDay: 0 })).toBe(true);
    expect(await store.get(record.id)).toMatchObject({ smtpPerDay: 0, perDay: null });
  });
});
