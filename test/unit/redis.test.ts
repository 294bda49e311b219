// Multi-instance mode against a real redis-server on 127.0.0.1: shared quotas, the Redis key store, outage and recovery.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { KeyStore } from '../../src/adapters/key-store.js';
import { createRedisCounters, type RedisCounterStore } from '../../src/adapters/redis-counters.js';
import { createRedisKeyStore } from '../../src/adapters/redis-key-store.js';
import { RESERVE_MAX } from '../../src/adapters/redis-reserves.js';
import { openKeyStore } from '../../src/cli/key-store-factory.js';
import { runKeys } from '../../src/cli/keys.js';
import { KeyDirectory } from '../../src/accounts/key-directory.js';
import { ApiError } from '../../src/http/errors.js';
import type { Limiter as CountingLimiter } from '../../src/http/limits.js';
import { createLimiter, type LimitValues } from '../../src/http/rate-limiter.js';
import { redisAvailable, startRedisServer, type TestRedis } from '../support/redis-server.js';
import { testKeyRecord } from '../support/key-records.js';
import { startFaultyTcp, type FaultyTcp } from '../faults/fault-upstreams.js';

const HAVE_REDIS = redisAvailable();
const CLI_DEFAULTS = { rateLimitPerMinute: 60, quotaPerDay: 5000, quotaPerMonth: 100000 };

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

  /** One "server": its own connection, counters and limiter, as a separate instance would have. */
  async function instance(defaults: LimitValues, prefix: string, url = redis.url): Promise<{ limiter: CountingLimiter; counters: RedisCounterStore }> {
    const counters = createRedisCounters({ url, keyPrefix: prefix, reconnectMaxDelayMs: 100 });
    const limiter = createLimiter({ defaults, counters });
    closers.push(() => limiter.close());
    await counters.ready();
    await vi.waitFor(() => expect(limiter.healthy()).toBe(true));
    return { limiter, counters };
  }

  describe('two instances on one Redis', () => {
    it.each([
      { window: 'day', limits: { perMinute: 100, perDay: 4, perMonth: 1000 }, refusal: 'DAILY_QUOTA_EXCEEDED' },
      { window: 'month', limits: { perMinute: 100, perDay: 100, perMonth: 4 }, refusal: 'QUOTA_EXCEEDED' },
      { window: 'minute', limits: { perMinute: 4, perDay: 100, perMonth: 1000 }, refusal: 'RATE_LIMIT_EXCEEDED' },
    ])('share one $window limit', async ({ window, limits, refusal }) => {
      const prefix = `t-share-${window}:`;
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
      const a = await instance(limits, 't-last:');
      const b = await instance(limits, 't-last:');
      const key = keyRecord();
      const results = [];
      for (const inst of [a, b, a, b, a, b]) results.push(await code(inst.limiter.consume(key)));
      expect(results).toEqual(['ok', 'ok', 'ok', 'ok', refusal, refusal]);
    });

    it('a refused request consumes nothing in Redis either', async () => {
      const a = await instance({ perMinute: 100, perDay: 2, perMonth: 1000 }, 't-refund:');
      const b = await instance({ perMinute: 100, perDay: 2, perMonth: 1000 }, 't-refund:');
      const key = keyRecord();
      await a.limiter.consume(key);
      await b.limiter.consume(key);
      expect(await code(a.limiter.consume(key))).toBe('DAILY_QUOTA_EXCEEDED');
      const { usage } = await b.limiter.peek(key);
      expect([usage.minute.used, usage.day.used, usage.month.used]).toEqual([2, 2, 2]);
    });

    it('headers reflect the shared counts', async () => {
      const a = await instance({ perMinute: 10, perDay: 20, perMonth: 30 }, 't-headers:');
      const b = await instance({ perMinute: 10, perDay: 20, perMonth: 30 }, 't-headers:');
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

  describe('concurrent requests of one key (one script run per batch)', () => {
    it.each([
      { window: 'minute', limits: { perMinute: 5, perDay: 100, perMonth: 1000 }, refusal: 'RATE_LIMIT_EXCEEDED' },
      { window: 'day', limits: { perMinute: 100, perDay: 5, perMonth: 1000 }, refusal: 'DAILY_QUOTA_EXCEEDED' },
      { window: 'month', limits: { perMinute: 100, perDay: 100, perMonth: 5 }, refusal: 'QUOTA_EXCEEDED' },
    ])('answer as if one by one in arrival order: $window', async ({ window, limits, refusal }) => {
      const a = await instance(limits, `t-batch-${window}:`);
      const key = keyRecord();
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () =>
          a.limiter.consume(key).then(
            (r) => r.headers,
            (e: ApiError) => e.code,
          ),
        ),
      );
      const granted = outcomes.slice(0, 5) as Array<Record<string, string>>;
      const remaining = { minute: 'RateLimit-Remaining', day: 'X-Quota-Daily-Remaining', month: 'X-Quota-Monthly-Remaining' }[window]!;
      expect(granted.map((h) => h[remaining])).toEqual(['4', '3', '2', '1', '0']);
      expect(outcomes.slice(5)).toEqual([refusal, refusal, refusal]);
      const { usage } = await a.limiter.peek(key);
      expect([usage.minute.used, usage.day.used, usage.month.used]).toEqual([5, 5, 5]);
    });

    it('a batch that fits is counted whole; the next one is refused whole and counts nothing', async () => {
      const a = await instance({ perMinute: 100, perDay: 6, perMonth: 1000 }, 't-batch-whole:');
      const key = keyRecord();
      const burst = (n: number) => Promise.all(Array.from({ length: n }, () => code(a.limiter.consume(key))));
      expect(await burst(6)).toEqual(Array(6).fill('ok'));
      expect(await burst(4)).toEqual(Array(4).fill('DAILY_QUOTA_EXCEEDED'));
      const { usage } = await a.limiter.peek(key);
      expect([usage.minute.used, usage.day.used]).toEqual([6, 6]);
    });
  });

  describe('reserving ahead, far from every limit', () => {
    /** EVALSHA calls Redis has run so far (each script call of the counters is one). */
    async function scriptRuns(): Promise<number> {
      const { Redis } = await import('ioredis');
      const admin = new Redis(redis.url);
      try {
        const stats = (await admin.info('commandstats')) as string;
        return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) + Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0);
      } finally {
        admin.disconnect();
      }
    }

    it('admits most requests without a script run, with exact, falling remaining counts', async () => {
      const a = await instance({ perMinute: 100_000, perDay: 100_000, perMonth: 100_000 }, 't-reserve-many:');
      const key = keyRecord();
      const before = await scriptRuns();
      const remaining: number[] = [];
      for (let i = 0; i < 500; i++) remaining.push(Number((await a.limiter.consume(key)).headers['X-Quota-Daily-Remaining']));
      expect(remaining).toEqual(Array.from({ length: 500 }, (_, i) => 100_000 - 1 - i));
      // The first run, then a top-up each time the reserve falls to half a grant: a handful of runs, not 500.
      expect((await scriptRuns()) - before).toBeLessThanOrEqual(1 + Math.ceil(500 / (RESERVE_MAX / 2)));
    });

    it('counts only requests in usage, and gives unused units back on close', async () => {
      const limits = { perMinute: 100_000, perDay: 100_000, perMonth: 100_000 };
      const a = await instance(limits, 't-reserve-close:');
      const b = await instance(limits, 't-reserve-close:');
      const key = keyRecord();
      for (let i = 0; i < 30; i++) await a.limiter.consume(key);
      expect((await a.limiter.peek(key)).usage.day.used).toBe(30); // this instance leaves its reserve out
      expect((await b.limiter.peek(key)).usage.day.used).toBeGreaterThan(30); // the other sees it as taken
      await a.limiter.close();
      const { usage } = await b.limiter.peek(key);
      expect([usage.minute.used, usage.day.used, usage.month.used]).toEqual([30, 30, 30]);
    });

    it('gives unused units back after a second without requests', async () => {
      const limits = { perMinute: 100_000, perDay: 100_000, perMonth: 100_000 };
      const a = await instance(limits, 't-reserve-idle:');
      const b = await instance(limits, 't-reserve-idle:');
      const key = keyRecord();
      for (let i = 0; i < 20; i++) await a.limiter.consume(key);
      await vi.waitFor(async () => expect((await b.limiter.peek(key)).usage.day.used).toBe(20), { timeout: 4000, interval: 200 });
    });

    it('two instances together never admit more than the limit, and reach it once reserves return', async () => {
      const limits = { perMinute: 100_000, perDay: 400, perMonth: 100_000 };
      const a = await instance(limits, 't-reserve-share:');
      const b = await instance(limits, 't-reserve-share:');
      const key = keyRecord();
      let admitted = 0;
      const burst = async (inst: typeof a, n: number) => {
        for (let i = 0; i < n; i++) if ((await code(inst.limiter.consume(key))) === 'ok') admitted++;
      };
      await Promise.all([burst(a, 300), burst(b, 300)]);
      expect(admitted).toBeLessThanOrEqual(400);
      await a.limiter.close();
      await b.limiter.close();
      const c = await instance(limits, 't-reserve-share:');
      await burst(c, 400 - admitted + 5);
      expect(admitted).toBe(400);
      expect((await c.limiter.peek(key)).usage.day.used).toBe(400);
    });
  });

  describe('key store on Redis', () => {
    async function store(): Promise<KeyStore> {
      const s = createRedisKeyStore({ url: redis.url, keyPrefix: 't-keys:' });
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

    it('a key revoked through the CLI is refused by two other instances within 1 s', async () => {
      const config = { dataDir: '/nonexistent', redisUrl: redis.url, ...CLI_DEFAULTS };
      const cli = await openKeyStore(config);
      closers.push(() => cli.close());
      const { record, key } = await cli.create({ name: 'to-revoke' });
      const directories = await Promise.all(
        [1, 2].map(async () => {
          const s = createRedisKeyStore({ url: redis.url });
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
        await vi.waitFor(() => expect(dir.authenticate(key)).rejects.toThrow(/revoked/), { timeout: 1000, interval: 20 });
      }
    });
  });

  describe('units other instances hold in reserve', () => {
    /** Consume until the first refusal: it, and how many were admitted before it. */
    async function untilRefused(limiter: CountingLimiter, key: ReturnType<typeof keyRecord>): Promise<{ refusal: ApiError; admitted: number }> {
      for (let admitted = 0; ; admitted++) {
        const refusal = await limiter.consume(key).then(
          () => null,
          (e: unknown) => e as ApiError,
        );
        if (refusal) return { refusal, admitted };
      }
    }

    it('near a quota they refuse for a moment only: RATE_LIMIT_EXCEEDED for seconds, then the rest of the quota, then the day', async () => {
      const limits = { perMinute: 100_000, perDay: 1600, perMonth: 100_000 };
      const a = await instance(limits, 't-held:');
      const b = await instance(limits, 't-held:');
      const key = keyRecord();
      // `a` reserves a sixteenth of the day and keeps using it slowly, so it is not given back meanwhile.
      await a.limiter.consume(key);
      let admitted = 1;
      let busy = true;
      const trickle = (async () => {
        while (busy) {
          if ((await code(a.limiter.consume(key))) === 'ok') admitted++;
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const first = await untilRefused(b.limiter, key);
      admitted += first.admitted;
      const held = first.refusal;
      expect([held.code, held.retryAfter! <= 2, held.message]).toEqual(['RATE_LIMIT_EXCEEDED', true, expect.stringMatching(/held in reserve by other instances/)]);
      busy = false;
      await trickle;
      // Idle, `a` gives its units back within two seconds: `b` gets them, then the day's own refusal.
      await new Promise((r) => setTimeout(r, (held.retryAfter! + 0.5) * 1000));
      const then = await untilRefused(b.limiter, key);
      expect([then.refusal.code, then.refusal.retryAfter! > 60]).toEqual(['DAILY_QUOTA_EXCEEDED', true]);
      expect(admitted + then.admitted).toBe(1600);
    });

    /** An instance whose connection to Redis runs through a relay the test can cut or freeze (Redis keeps its data). */
    async function relayed(limits: LimitValues, prefix: string): Promise<{ relay: FaultyTcp; inst: Awaited<ReturnType<typeof instance>> }> {
      const relay = await startFaultyTcp(redis.port);
      const inst = await instance(limits, prefix, `redis://127.0.0.1:${relay.port}`);
      closers.unshift(() => relay.close()); // closed after the instance
      return { relay, inst };
    }
    const HIGH = { perMinute: 100_000, perDay: 100_000, perMonth: 100_000 };

    it('units of a reserve retired while Redis was out of reach are given back once it answers', async () => {
      const { relay, inst: a } = await relayed(HIGH, 't-held-cut:');
      const b = await instance(HIGH, 't-held-cut:');
      const key = keyRecord();
      for (let i = 0; i < 5; i++) await a.limiter.consume(key);
      expect((await b.limiter.peek(key)).usage.day.used).toBeGreaterThan(5); // a's reserve counts meanwhile
      relay.mode = 'reset'; // connections dropped, new ones reset
      relay.resetAll();
      await vi.waitFor(() => expect(a.limiter.healthy()).toBe(false), { timeout: 3000 });
      await new Promise((r) => setTimeout(r, 2500)); // idle: a retires its reserve, with Redis out of reach
      relay.mode = 'pass';
      await vi.waitFor(() => expect(a.limiter.healthy()).toBe(true), { timeout: 5000, interval: 50 });
      await vi.waitFor(async () => expect((await b.limiter.peek(key)).usage.day.used).toBe(5), { timeout: 3000, interval: 100 });
    });

    it('a Redis that hangs, then catches up, counts once the requests an instance counted itself meanwhile', async () => {
      const { relay, inst: a } = await relayed(HIGH, 't-hang:');
      const b = await instance(HIGH, 't-hang:');
      const key = keyRecord();
      relay.freeze();
      const answers = await Promise.all(Array.from({ length: 8 }, () => code(a.limiter.consume(key)))); // after the 500 ms timeout
      expect(answers).toEqual(Array(8).fill('ok'));
      relay.thaw(); // Redis now runs the script that timed out: past its deadline, it counts nothing
      // No further request is needed: within a second or two the 8 counted here are added.
      await vi.waitFor(async () => expect((await b.limiter.peek(key)).usage.day.used).toBe(8), { timeout: 4000, interval: 100 });
      await new Promise((r) => setTimeout(r, 300));
      expect((await b.limiter.peek(key)).usage.day.used).toBe(8);
      await a.limiter.consume(keyRecord());
      expect(a.limiter.healthy()).toBe(true);
    });

    it('requests counted alone during a hang reach Redis when the instance closes right after', async () => {
      const { relay, inst: a } = await relayed(HIGH, 't-hang-close:');
      const b = await instance(HIGH, 't-hang-close:');
      const key = keyRecord();
      relay.freeze();
      await Promise.all(Array.from({ length: 3 }, () => a.limiter.consume(key)));
      relay.thaw();
      await a.limiter.close();
      expect((await b.limiter.peek(key)).usage.day.used).toBe(3);
    });

    it("an instance clock that stepped back after it was compared with Redis' is compared again", async () => {
      const a = await instance(HIGH, 't-clock:');
      const real = Date.now.bind(Date);
      const stepped = vi.spyOn(Date, 'now').mockImplementation(() => real() - 5000);
      try {
        expect(await code(a.limiter.consume(keyRecord()))).toBe('ok'); // past its deadline on Redis' clock: counted here
        expect(a.limiter.healthy()).toBe(false);
        await vi.waitFor(
          async () => {
            expect(await code(a.limiter.consume(keyRecord()))).toBe('ok');
            expect(a.limiter.healthy()).toBe(true);
          },
          { timeout: 3000, interval: 50 },
        );
      } finally {
        stepped.mockRestore();
      }
    });

    it('units of an instance that died are not waited for beyond their window: the day refuses for the day again', async () => {
      const { Redis } = await import('ioredis');
      const limits = { perMinute: 100_000, perDay: 800, perMonth: 100_000 };
      const opts = { keyPrefix: 't-dead:', reconnectMaxDelayMs: 100, minuteMs: 2000 };
      const conn = new Redis(redis.url);
      const counters = createRedisCounters({ client: conn, ...opts });
      const a = createLimiter({ defaults: limits, counters });
      await vi.waitFor(() => expect(a.healthy()).toBe(true));
      const key = keyRecord();
      await a.consume(key); // reserves 49 units
      conn.disconnect(); // a dies holding them: no release ever comes
      closers.push(() => a.close());
      const b = createLimiter({ defaults: limits, counters: createRedisCounters({ url: redis.url, ...opts }) });
      closers.push(() => b.close());
      await vi.waitFor(() => expect(b.healthy()).toBe(true));
      const refusal = async () => (await untilRefused(b, key)).refusal;
      expect((await refusal()).code).toBe('RATE_LIMIT_EXCEEDED'); // a's units might still come back
      // Their window ended 2 s after they were reserved; 5 s later they are no one's hope.
      await vi.waitFor(async () => expect([(await refusal()).code]).toEqual(['DAILY_QUOTA_EXCEEDED']), { timeout: 10_000, interval: 500 });
    }, 20_000);

    it('reserves crossing minute windows: the day counts exactly the requests admitted, the minute its own', async () => {
      const limits = { perMinute: 100_000, perDay: 100_000, perMonth: 100_000 };
      const short = (prefix: string) => createRedisCounters({ url: redis.url, keyPrefix: prefix, reconnectMaxDelayMs: 100, minuteMs: 2000 });
      const counters = short('t-windows:');
      const a = createLimiter({ defaults: limits, counters });
      closers.push(() => a.close());
      await counters.ready();
      await vi.waitFor(() => expect(a.healthy()).toBe(true));
      const key = keyRecord();
      let admitted = 0;
      const until = Date.now() + 4500; // three windows, requests every 20 ms: reserves retire at each end
      while (Date.now() < until) {
        const burst = await Promise.all(Array.from({ length: 3 }, () => code(a.consume(key))));
        admitted += burst.filter((c) => c === 'ok').length;
        await new Promise((r) => setTimeout(r, 20));
      }
      await a.close();
      const b = await instance(limits, 't-windows:');
      const { usage } = await b.limiter.peek(key);
      expect([usage.day.used, usage.month.used]).toEqual([admitted, admitted]);
      expect(usage.minute.used).toBeLessThanOrEqual(admitted);
    }, 15_000);

    it('answers arriving 380 ms late do not let an instance use reserve units after Redis closed their window', async () => {
      const { Redis } = await import('ioredis');
      const limits = { perMinute: 1600, perDay: 1e9, perMonth: 1e9 };
      const two = (url: string) => {
        const counters = createRedisCounters({ url, keyPrefix: 't-edge:', reconnectMaxDelayMs: 100, minuteMs: 2000 });
        const limiter = createLimiter({ defaults: limits, counters });
        closers.push(() => limiter.close());
        return { counters, limiter };
      };
      const relay = await startFaultyTcp(redis.port);
      relay.mode = 'slow';
      relay.delayMs = 380;
      closers.unshift(() => relay.close());
      const a = two(`redis://127.0.0.1:${relay.port}`);
      const b = two(redis.url);
      await Promise.all([a.counters.ready(), b.counters.ready()]);
      await vi.waitFor(() => expect([a.limiter.healthy(), b.limiter.healthy()]).toEqual([true, true]), { timeout: 3000 });
      const key = keyRecord();
      expect(await code(a.limiter.consume(key))).toBe('ok'); // opens the window and reserves ahead
      const admin = new Redis(redis.url);
      const firstEnds = Date.now() + (await admin.pttl(`t-edge:{${key.id}}:m`));
      admin.disconnect();
      const aAfterEnd: number[] = []; // admissions from a's reserve (no round trip) once the window had closed
      let stop = false;
      const aLoop = (async () => {
        while (!stop) {
          const t = Date.now();
          if ((await code(a.limiter.consume(key))) === 'ok' && Date.now() - t < 3 && t > firstEnds) aAfterEnd.push(t);
          await new Promise((r) => setTimeout(r, 15));
        }
      })();
      await new Promise((r) => setTimeout(r, firstEnds - Date.now() + 5));
      let bNext = 0; // b fills the next window at once
      for (let i = 0; i < 40; i++) bNext += (await Promise.all(Array.from({ length: 50 }, () => code(b.limiter.consume(key))))).filter((c) => c === 'ok').length;
      await new Promise((r) => setTimeout(r, 400));
      stop = true;
      await aLoop;
      expect(bNext + aAfterEnd.length).toBeLessThanOrEqual(1600);
    }, 20_000);

    it('an answer that arrived while the process was too busy to read it wins over the timeout', async () => {
      const relay = await startFaultyTcp(redis.port);
      relay.mode = 'slow'; // answers come 50 ms after the script ran
      relay.delayMs = 50;
      closers.unshift(() => relay.close());
      const counters = createRedisCounters({ url: `redis://127.0.0.1:${relay.port}`, keyPrefix: 't-busy:', reconnectMaxDelayMs: 100 });
      const a = createLimiter({ defaults: HIGH, counters });
      closers.push(() => a.close());
      await counters.ready();
      await vi.waitFor(() => expect(a.healthy()).toBe(true), { timeout: 3000 });
      const key = keyRecord();
      setTimeout(() => {
        const end = Date.now() + 700; // busy from 10 ms to 710 ms: the answer is on the socket, the timer due
        while (Date.now() < end);
      }, 10);
      const answers = await Promise.all(Array.from({ length: 5 }, () => code(a.consume(key))));
      expect([answers, counters.countedAlone!(), a.healthy()]).toEqual([Array(5).fill('ok'), 0, true]);
    });

    it('a process that stalls past the timeout neither counts twice nor forgets the minute count Redis gave it', async () => {
      const limits = { perMinute: 5, perDay: 100_000, perMonth: 100_000 };
      const a = await instance(limits, 't-stall:');
      const key = keyRecord();
      const first = await Promise.all(Array.from({ length: 5 }, () => code(a.limiter.consume(key))));
      const second = Promise.all(Array.from({ length: 5 }, () => code(a.limiter.consume(key))));
      setImmediate(() => {
        const end = Date.now() + 600; // the event loop stalls past the 500 ms timeout while Redis answers
        while (Date.now() < end);
      });
      // Counted alone or answered late, the five over the limit are refused: the fallback starts from Redis' count.
      expect([...first, ...(await second)]).toEqual([...Array(5).fill('ok'), ...Array(5).fill('RATE_LIMIT_EXCEEDED')]);
      const b = await instance(limits, 't-stall:');
      await new Promise((r) => setTimeout(r, 1500)); // anything counted alone is added by then
      const { usage } = await b.limiter.peek(key);
      expect([usage.minute.used, usage.day.used]).toEqual([5, 5]);
    });

    it('a Redis that restarted empty is not given back units it never counted', async () => {
      const limits = { perMinute: 100_000, perDay: 100_000, perMonth: 100_000 };
      const a = await instance(limits, 't-held-lost:');
      const key = keyRecord();
      await a.limiter.consume(key); // one request and a reserve of 400, both lost with Redis' data
      await redis.kill();
      try {
        await vi.waitFor(() => expect(a.limiter.healthy()).toBe(false), { timeout: 3000 });
        for (let i = 0; i < 3; i++) await a.limiter.consume(key); // counted here, added to Redis when it returns
      } finally {
        await redis.start();
      }
      await vi.waitFor(() => expect(a.limiter.healthy()).toBe(true), { timeout: 5000, interval: 50 });
      await a.limiter.close(); // the reserve is released: nothing to give back in the new Redis
      const b = await instance(limits, 't-held-lost:');
      expect((await b.limiter.peek(key)).usage.day.used).toBe(3);
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
      const a = await instance(limits, 't-outage:');
      const b = await instance(limits, 't-outage:');
      const before = keyRecord();
      await a.limiter.consume(before);
      await b.limiter.consume(before);

      await redis.kill();
      await vi.waitFor(() => expect([a.limiter.healthy(), b.limiter.healthy()]).toEqual([false, false]), { timeout: 3000 });

      // Per-instance insurance: each instance enforces the per-minute limit on its own.
      const during = keyRecord();
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await code(a.limiter.consume(during)));
      expect(answers).toEqual(['ok', 'ok', 'ok', 'RATE_LIMIT_EXCEEDED']);
      expect(await code(b.limiter.consume(during))).toBe('ok');
      // The daily count this instance had seen in Redis carries on locally.
      expect((await a.limiter.consume(before)).headers['X-Quota-Daily-Remaining']).toBe('98');

      await redis.start();
      await vi.waitFor(() => expect([a.limiter.healthy(), b.limiter.healthy()]).toEqual([true, true]), { timeout: 5000, interval: 50 });

      // Shared again: one minute limit across both instances.
      const after = keyRecord();
      const shared = [];
      for (const inst of [a, b, a, b]) shared.push(await code(inst.limiter.consume(after)));
      expect(shared).toEqual(['ok', 'ok', 'ok', 'RATE_LIMIT_EXCEEDED']);
      // Increments counted locally during the outage were merged into Redis.
      expect((await b.limiter.peek(during)).usage.day.used).toBe(4);
    });
  });
});
