// Multi-instance mode against a real redis-server on 127.0.0.1: shared quotas (RateLimiterRedis), the Redis key store, outage and recovery.
// @module-tag slow (left out of make test-fast): starts redis-server
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { KeyStore } from '../../src/adapters/keys/key-store.js';
import { createRedisCounters, type RedisCounterStore } from '../../src/adapters/limits/redis-counters.js';
import { createRedisKeyStore } from '../../src/adapters/keys/redis-key-store.js';
import { Redis } from 'ioredis';
import { utcDay, utcMonth } from '../../src/domain/utc-windows.js';
import { openKeyStore } from '../../src/cli/key-store-factory.js';
import { runKeys } from '../../src/cli/keys-command.js';
import { KeyDirectory } from '../../src/accounts/key-directory.js';
import { ApiError } from '../../src/errors.js';
import type { Limiter as CountingLimiter } from '../../src/accounts/limits.js';
import { createLimiter, type LimitValues } from '../../src/accounts/limiter.js';
import { COMMAND_TIMEOUT_MS, redisAvailable, startRedisServer, type TestRedis } from '../support/redis-server.js';
import { testKeyRecord } from '../support/key-records.js';
import { waitFor } from '../support/wait.js';

const HAVE_REDIS = redisAvailable();
const CLI_DEFAULTS = { rateLimitPerMinute: 60, quotaPerDay: 5000, quotaPerMonth: 100000, smtpDailyPerKey: 1000 };

const keyRecord = testKeyRecord;

async function code(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (err === null) return 'ok';
  if (err instanceof ApiError) return err.code;
  throw err;
}

describe.skipIf(!HAVE_REDIS)('Redis mode (real redis-server)', () => {
  let redis: TestRedis;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /**
   * One "server": its own connection, counters and limiter, as a separate instance would have. `outage`: the service's
   * own command timeout, for the tests of an outage; else a deadline for a starved machine.
   */
  async function instance(defaults: LimitValues, prefix: string, outage = false): Promise<{ limiter: CountingLimiter; counters: RedisCounterStore }> {
    const counters = createRedisCounters({ url: redis.url, keyPrefix: prefix, reconnectMaxDelayMs: 100, ...(outage ? {} : { commandTimeoutMs: COMMAND_TIMEOUT_MS }) });
    const limiter = createLimiter({ defaults, counters });
    closers.push(() => limiter.close());
    await counters.ready();
    await waitFor(() => limiter.healthy(), { what: 'the limiter healthy' });
    return { limiter, counters };
  }

  describe('two instances on one Redis', () => {
    it.each([
      { window: 'day', limits: { perMinute: 100, perDay: 4, perMonth: 1000 }, refusal: 'DAILY_QUOTA_EXCEEDED' },
      { window: 'month', limits: { perMinute: 100, perDay: 100, perMonth: 4 }, refusal: 'QUOTA_EXCEEDED' },
      { window: 'minute', limits: { perMinute: 4, perDay: 100, perMonth: 1000 }, refusal: 'RATE_LIMIT_EXCEEDED' },
    ])('share one $window limit', async ({ window, limits, refusal }) => {
      const prefix = `t-share-${window}`;
      const a = await instance(limits, prefix);
      const b = await instance(limits, prefix);
      const key = keyRecord();
      const results = [];
      for (const inst of [a, b, a, b, a, b]) results.push(await code(inst.limiter.consume(key)));
      expect(results).toEqual(['ok', 'ok', 'ok', 'ok', refusal, refusal]);
    });

    it.each([
      { exhausted: 'minute and day', limits: { perMinute: 4, perDay: 4, perMonth: 1000 }, refusal: 'DAILY_QUOTA_EXCEEDED' },
      { exhausted: 'all three', limits: { perMinute: 4, perDay: 4, perMonth: 4 }, refusal: 'QUOTA_EXCEEDED' },
    ])('$exhausted exhausted: the refusal names the window that resets last', async ({ limits, refusal }) => {
      const a = await instance(limits, 't-last');
      const b = await instance(limits, 't-last');
      const key = keyRecord();
      const results = [];
      for (const inst of [a, b, a, b, a, b]) results.push(await code(inst.limiter.consume(key)));
      expect(results).toEqual(['ok', 'ok', 'ok', 'ok', refusal, refusal]);
    });

    it('a refused request consumes nothing in Redis either', async () => {
      const a = await instance({ perMinute: 100, perDay: 2, perMonth: 1000 }, 't-refund');
      const b = await instance({ perMinute: 100, perDay: 2, perMonth: 1000 }, 't-refund');
      const key = keyRecord();
      await a.limiter.consume(key);
      await b.limiter.consume(key);
      expect(await code(a.limiter.consume(key))).toBe('DAILY_QUOTA_EXCEEDED');
      const { usage } = await b.limiter.peek(key);
      expect([usage.minute.used, usage.day.used, usage.month.used]).toEqual([2, 2, 2]);
    });

    it('headers reflect the shared counts', async () => {
      const a = await instance({ perMinute: 10, perDay: 20, perMonth: 30 }, 't-headers');
      const b = await instance({ perMinute: 10, perDay: 20, perMonth: 30 }, 't-headers');
      const key = keyRecord();
      await a.limiter.consume(key);
      const { headers } = await b.limiter.consume(key);
      expect(headers).toMatchObject({
        'RateLimit-Limit': '10',
        'RateLimit-Remaining': '8',
        'X-Quota-Daily-Remaining': '18',
        'X-Quota-Monthly-Remaining': '28',
      });
    });
  });

  describe('300 parallel requests over two instances (RateLimiterRedis, atomic per count)', () => {
    it.each([
      { window: 'minute', limits: { perMinute: 10, perDay: 1000, perMonth: 5000 } },
      { window: 'day', limits: { perMinute: 60, perDay: 10, perMonth: 5000 } },
      { window: 'month', limits: { perMinute: 60, perDay: 1000, perMonth: 10 } },
    ])('10 per $window: exactly 10 succeed, each of 5 times, and the refused ones count nothing', { timeout: 60_000 }, async ({ window, limits }) => {
      const a = await instance(limits, `t-par-${window}`);
      const b = await instance(limits, `t-par-${window}`);
      for (let round = 0; round < 5; round++) {
        const key = keyRecord();
        const results = await Promise.all(Array.from({ length: 300 }, (_, i) => code((i % 2 ? a : b).limiter.consume(key))));
        expect(results.filter((r) => r === 'ok'), `round ${round}`).toHaveLength(10);
        const { usage } = await a.limiter.peek(key);
        expect([usage.minute.used, usage.day.used, usage.month.used], `round ${round}`).toEqual([10, 10, 10]);
      }
    });
  });

  describe('keys in Redis', () => {
    it('are the calendar and minute keys of the previous layout, so an upgrade keeps the counts', async () => {
      const { limiter } = await instance({ perMinute: 100, perDay: 3, perMonth: 1000 }, 't-layout');
      const key = keyRecord();
      const client = new Redis(redis.url);
      closers.push(async () => void client.disconnect());
      const now = new Date();
      const day = `d:${now.toISOString().slice(0, 10)}`;
      // Written as the hand-written scripts did: plain integers under `<prefix>:{key_id}:<window>`.
      await client.set(`t-layout:{${key.id}}:${day}`, 3, 'EX', 90_000);
      expect(await code(limiter.consume(key))).toBe('DAILY_QUOTA_EXCEEDED');
      expect(await client.get(`t-layout:{${key.id}}:${day}`)).toBe('3');
    });

    it('calendar counters expire shortly after their period, the minute counter after 60 s', async () => {
      const { limiter } = await instance({ perMinute: 100, perDay: 100, perMonth: 1000 }, 't-ttl');
      const key = keyRecord();
      await limiter.consume(key);
      const client = new Redis(redis.url);
      closers.push(async () => void client.disconnect());
      const now = Date.now();
      const [m, d] = [utcMonth(now), utcDay(now)];
      const ttl = async (w: string) => Number(await client.pttl(`t-ttl:{${key.id}}:${w}`));
      expect(await ttl('m')).toBeGreaterThan(55_000);
      expect(await ttl('m')).toBeLessThanOrEqual(60_000);
      for (const [w, end] of [[d.id, d.endsAt], [m.id, m.endsAt]] as const) {
        const left = await ttl(w);
        expect(left).toBeGreaterThan(end - Date.now());
        expect(left).toBeLessThanOrEqual(end - now + 62_000);
      }
    });
  });


  describe('key store on Redis', () => {
    async function store(): Promise<KeyStore> {
      const s = createRedisKeyStore({ url: redis.url, keyPrefix: 't-keys:', commandTimeoutMs: COMMAND_TIMEOUT_MS });
      closers.push(() => s.close());
      await s.ready();
      return s;
    }

    it('create, get, list, update limits and status; revocation is final', async () => {
      const s = await store();
      const { record } = await s.create({ name: 'alpha', perDay: 10 });
      expect(await s.get(record.id)).toEqual(record);
      expect((await s.list()).map((k) => k.id)).toContain(record.id);
      expect(await s.updateLimits(record.id, { perMinute: 5, perDay: null })).toBe(true);
      expect(await s.get(record.id)).toMatchObject({ perMinute: 5, perDay: null, perMonth: null });
      expect(await s.setStatus(record.id, 'revoked')).toBe(true);
      expect(await s.setStatus(record.id, 'active')).toBe(false);
      expect(await s.get(record.id)).toMatchObject({ status: 'revoked' });
    });

    it('unknown ids change nothing', async () => {
      const s = await store();
      const before = (await s.changes(null)).cursor;
      expect([await s.setStatus('key_nope', 'revoked'), await s.updateLimits('key_nope', { perDay: 1 }), await s.get('key_nope')]).toEqual([
        false,
        false,
        null,
      ]);
      expect(await s.changes(before)).toEqual({ cursor: before, hashes: [], reset: false });
    });

    it('every change is in the change feed, naming the key that changed', async () => {
      const s = await store();
      const start = (await s.changes(null)).cursor;
      const { record } = await s.create({ name: 'beta' });
      await s.updateLimits(record.id, { perMonth: 7 });
      await s.setStatus(record.id, 'inactive');
      const feed = await s.changes(start);
      expect(feed).toEqual({ cursor: String(Number(start) + 3), hashes: [record.hash, record.hash, record.hash], reset: false });
    });

    it('a key revoked through the CLI is refused by two other instances', async () => {
      const config = { dataDir: '/nonexistent', redisUrl: redis.url, ...CLI_DEFAULTS };
      const cli = await openKeyStore(config, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
      closers.push(() => cli.close());
      const { record, key } = await cli.create({ name: 'to-revoke' });
      const directories = await Promise.all(
        [1, 2].map(async () => {
          const s = createRedisKeyStore({ url: redis.url, commandTimeoutMs: COMMAND_TIMEOUT_MS });
          closers.push(() => s.close());
          await s.ready();
          const dir = new KeyDirectory({ store: s, refreshMs: 50 });
          await dir.refresh();
          dir.start();
          closers.push(async () => dir.stop());
          return dir;
        }),
      );
      for (const dir of directories) expect((await dir.authenticate(key)).id).toBe(record.id);

      const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      try {
        expect(await runKeys(['revoke', record.id], cli, CLI_DEFAULTS)).toBe(0);
      } finally {
        write.mockRestore();
      }
      for (const dir of directories) {
        await waitFor(() => dir.authenticate(key).then(() => false, (err: Error) => /revoked/.test(err.message)), { intervalMs: 20, what: 'the key refused as revoked' });
      }
    });
  });

  describe('Redis outage', () => {
    it('killed: the key directory keeps serving the keys it has seen, reports unhealthy, and answers 503 for others', async () => {
      const s = createRedisKeyStore({ url: redis.url, keyPrefix: 't-cache:', reconnectMaxDelayMs: 100 });
      closers.push(() => s.close());
      await s.ready();
      const { record, key } = await s.create({ name: 'cached' });
      const other = await s.create({ name: 'not-seen' });
      const dir = new KeyDirectory({ store: s, refreshMs: 50 });
      await dir.refresh();
      expect((await dir.authenticate(key)).id).toBe(record.id);

      await redis.kill();
      try {
        await dir.refresh();
        expect([dir.healthy, (await dir.authenticate(key)).id]).toEqual([false, record.id]);
        expect(await code(dir.authenticate(other.key))).toBe('SERVICE_UNAVAILABLE');
      } finally {
        await redis.start();
      }
    });

    it('killed: requests still answered (insurance), healthy() false; restarted: healthy and shared again', async () => {
      const limits = { perMinute: 3, perDay: 100, perMonth: 1000 };
      const a = await instance(limits, 't-outage', true);
      const b = await instance(limits, 't-outage', true);
      const before = keyRecord();
      await a.limiter.consume(before);
      await b.limiter.consume(before);

      await redis.kill();
      await waitFor(() => !a.limiter.healthy() && !b.limiter.healthy(), { what: 'both limiters unhealthy' });

      // Per-instance insurance: each instance enforces the per-minute limit on its own.
      const during = keyRecord();
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await code(a.limiter.consume(during)));
      expect(answers).toEqual(['ok', 'ok', 'ok', 'RATE_LIMIT_EXCEEDED']);
      expect(await code(b.limiter.consume(during))).toBe('ok');

      await redis.start();
      await waitFor(() => a.limiter.healthy() && b.limiter.healthy(), { intervalMs: 50, what: 'both limiters healthy' });

      // Shared again: one minute limit across both instances.
      const after = keyRecord();
      const shared = [];
      for (const inst of [a, b, a, b]) shared.push(await code(inst.limiter.consume(after)));
      expect(shared).toEqual(['ok', 'ok', 'ok', 'RATE_LIMIT_EXCEEDED']);
      // Counting resumed in Redis (restarted empty: no persistence here), without a restart: one shared day count.
      await a.limiter.consume(before);
      expect([(await a.limiter.peek(before)).usage.day.used, (await b.limiter.peek(before)).usage.day.used]).toEqual([1, 1]);
    });
  });
});
