// Shared usage counters on Redis: minute, day and month checked and counted atomically by one Lua script.
//
// Every instance on the same Redis enforces one limit. CONSUME_LUA (redis-scripts.ts) grants as many of a
// batch's requests as every window still has room for, counting nothing for the rest. Requests for the same
// key arriving within one turn of the event loop form one batch; the outcome is exactly that of running
// them one by one in arrival order (the first `granted` counted, the rest refused by the first full window,
// consuming nothing). Far from every limit a grant also reserves units ahead (redis-reserves.ts), and the
// following requests are admitted from them without waiting for Redis; close to a limit nothing is
// reserved, so there every request is decided in Redis. The minute counter is a fixed 60 s window (PEXPIRE
// on its first increment, like rate-limiter-flexible's RateLimiterRedis); day and month counters expire an
// hour after their window. Keys: `<prefix>{key_id}:m`, `<prefix>{key_id}:d:2026-11-22`,
// `<prefix>{key_id}:m:2026-11` (the braces are a Redis Cluster hash tag: one API key's counters share a slot).
//
// Redis unreachable (connection lost, command timeout): requests keep being answered.
// - per minute: an in-memory insurance limiter (rate-limiter-flexible RateLimiterMemory) per instance, so
//   N instances may admit up to N times the limit while degraded;
// - day/month: counted locally on top of the last values this instance saw in Redis; the local increments
//   are added to Redis (INCRBY) when the connection returns, so an outage never hands a fresh quota to a
//   key this instance has served (a key it had not seen starts from 0 locally);
// - healthy() is false (GET /readyz reports it); the client reconnects in the background and healthy()
//   turns true again once Redis answers and the local increments are merged.
import type { Redis } from 'ioredis';
import { MINUTE_MS, type CounterStore, type LimitWindows, type TakeResult, type UsageCounts } from './counter-store.js';
import { LocalCounters, createMinuteLimiter, readLocally, takeLocally } from './local-counters.js';
import { closeClient, createRedisClient, waitForReady, type RedisClientOptions } from './redis-client.js';
import { RESERVE_DIVISOR, RESERVE_IDLE_MS, RESERVE_MAX, Reserves, type Reserve } from './redis-reserves.js';
import { CONSUME_LUA, READ_LUA, RELEASE_LUA, minuteState, resultOf, windowsId } from './redis-scripts.js';

/** Calendar counters are kept an hour past their window, then Redis drops them. */
const GRACE_SECONDS = 3600;

export interface RedisCountersOptions extends RedisClientOptions {
  /** REDIS_URL; ignored when `client` is given. */
  url?: string;
  /** An existing client (not closed by close()). */
  client?: Redis;
  /** Prefix of every Redis key; default `vls:`. */
  keyPrefix?: string;
  /** Clock for pruning the local fallback state; default Date.now. */
  now?: () => number;
  logger?: { warn: (obj: object, msg?: string) => void };
}

export interface RedisCounterStore extends CounterStore {
  /** Resolves when connected (rejects after timeoutMs; counting works meanwhile, degraded). */
  ready(timeoutMs?: number): Promise<void>;
}

type Script = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

/** Requests for the same windows and limits waiting for one script run. */
interface Batch {
  w: LimitWindows;
  waiters: Array<(r: TakeResult) => void>;
}

export function createRedisCounters(opts: RedisCountersOptions): RedisCounterStore {
  if (!opts.client && !opts.url) throw new Error('createRedisCounters needs a url or a client');
  const owned = !opts.client;
  const client = opts.client ?? createRedisClient(opts.url!, opts);
  const prefix = opts.keyPrefix ?? 'vls:';
  const now = opts.now ?? Date.now;
  client.defineCommand('vlsConsume', { lua: CONSUME_LUA });
  client.defineCommand('vlsUsage', { lua: READ_LUA });
  client.defineCommand('vlsRelease', { lua: RELEASE_LUA });
  const scripts = client as unknown as { vlsConsume: Script; vlsUsage: Script; vlsRelease: Script };

  const insurance = createMinuteLimiter();
  const local = new LocalCounters();
  let ok = false;
  let merging: Promise<void> | null = null;

  const failed = (err: unknown): void => {
    if (ok) opts.logger?.warn({ err: String(err) }, 'redis unreachable: limits counted locally');
    ok = false;
  };

  /** Add the increments counted while degraded to Redis; on failure they stay pending. */
  async function merge(): Promise<void> {
    const batch = local.drain();
    if (batch.length === 0) return;
    const multi = client.multi();
    for (const p of batch) multi.incrby(prefix + p.key, p.n).expireat(prefix + p.key, Math.ceil(p.expiresAt / 1000) + GRACE_SECONDS);
    try {
      await multi.exec();
    } catch (err) {
      local.restore(batch);
      throw err;
    }
  }

  const onReady = (): void => {
    merging ??= merge()
      .then(() => {
        ok = true;
      }, failed)
      .finally(() => {
        merging = null;
      });
  };
  const onClose = (): void => failed(new Error('redis connection closed'));
  client.on('ready', onReady);
  client.on('close', onClose);
  if (client.status === 'ready') onReady();

  const keysOf = (w: LimitWindows): string[] => [prefix + w.minute.key, ...w.calendar.map((c) => prefix + c.key)];
  let closing = false;

  /** Script calls in flight, awaited by close() so that no reserved unit is left behind. */
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    return p.finally(() => inFlight.delete(p));
  };

  /** Unused reserved units back to Redis; on failure they stay counted (never more than a limit admitted). */
  const reserves = new Reserves((r: Reserve, units: number) => {
    if (client.status !== 'ready') return;
    const keys = keysOf(r.w);
    track(scripts.vlsRelease(keys.length, ...keys, units, Math.max(0, r.minuteEndsAt - now()))).catch(failed);
  });

  /** One script call for `want` requests of these windows (0: a top-up), reserving ahead where there is room. */
  async function consume(w: LimitWindows, want: number) {
    const args: (string | number)[] = keysOf(w);
    args.push(w.minute.limit, MINUTE_MS);
    for (const c of w.calendar) args.push(c.limit);
    for (const c of w.calendar) args.push(Math.ceil(c.expiresAt / 1000) + GRACE_SECONDS);
    args.push(want, closing ? 0 : RESERVE_MAX, RESERVE_DIVISOR);
    const [granted, reserved, pttl, ...counts] = await track(scripts.vlsConsume(w.calendar.length + 1, ...args));
    const after = counts.slice(1);
    for (let i = 0; i < w.calendar.length; i++) local.observe(w.calendar[i].key, after[i], w.calendar[i].expiresAt);
    ok = true;
    reserves.credit(windowsId(w), w, reserved, pttl, counts[0], after, now());
    return { granted, reserved, pttl, minuteAfter: counts[0], after };
  }

  function refill(r: Reserve): void {
    consume(r.w, 0)
      .catch(failed)
      .finally(() => {
        r.refilling = false;
      });
  }

  const pending = new Map<string, Batch>();

  function flush(): void {
    const batches = [...pending.values()];
    pending.clear();
    for (const b of batches) void run(b);
  }

  async function run({ w, waiters }: Batch): Promise<void> {
    let g: Awaited<ReturnType<typeof consume>>;
    try {
      g = await consume(w, waiters.length);
    } catch (err) {
      failed(err);
      for (const resolve of waiters) resolve(await takeLocally(insurance, local, w));
      return;
    }
    // Units reserved meanwhile (a top-up that answered first) serve requests Redis had no more room for.
    const id = windowsId(w);
    waiters.forEach((resolve, i) => {
      const fromReserve = i >= g.granted ? reserves.use(id, now(), refill) : null;
      resolve(fromReserve ?? resultOf(w, i, g.granted, g.pttl, g.minuteAfter, g.after, reserves.unitsOf(id)));
    });
  }

  const sweep = setInterval(() => reserves.sweep(now() - RESERVE_IDLE_MS), RESERVE_IDLE_MS);
  sweep.unref();
  const prune = setInterval(() => local.prune(now() - GRACE_SECONDS * 1000), 60_000);
  prune.unref();

  return {
    take(w: LimitWindows): Promise<TakeResult> {
      if (client.status !== 'ready' || merging !== null) {
        ok = false;
        return takeLocally(insurance, local, w);
      }
      const id = windowsId(w);
      const reserved = reserves.use(id, now(), refill);
      if (reserved) return Promise.resolve(reserved);
      let batch = pending.get(id);
      if (!batch) {
        batch = { w, waiters: [] };
        pending.set(id, batch);
        if (pending.size === 1) setImmediate(flush);
      }
      const waiters = batch.waiters;
      return new Promise((resolve) => waiters.push(resolve));
    },
    async read(minuteKey, keys): Promise<UsageCounts> {
      if (client.status === 'ready') {
        try {
          const [pttl, minuteUsed, ...counts] = await scripts.vlsUsage(keys.length + 1, prefix + minuteKey, ...keys.map((k) => prefix + k));
          // This instance's unused reserved units are not usage yet.
          const [minuteHeld, ...held] = reserves.held(minuteKey, keys, now() + pttl);
          return { minute: minuteState(pttl, minuteUsed - minuteHeld), counts: counts.map((c, i) => c - held[i]) };
        } catch (err) {
          failed(err);
        }
      }
      return readLocally(insurance, local, minuteKey, keys);
    },
    healthy: () => ok && client.status === 'ready',
    ready: (timeoutMs) => waitForReady(client, timeoutMs),
    async close() {
      clearInterval(prune);
      clearInterval(sweep);
      // No more reserving; wait for grants in flight, then give every unused unit back.
      closing = true;
      await Promise.allSettled([...inFlight]);
      reserves.sweep();
      await Promise.allSettled([...inFlight]);
      client.off('ready', onReady);
      client.off('close', onClose);
      if (owned) await closeClient(client);
    },
  };
}
