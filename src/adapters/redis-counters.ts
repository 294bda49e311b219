// Shared usage counters on Redis: minute, day and month checked and counted by one Lua script per batch.
//
// Every instance on the same Redis enforces one limit. CONSUME_LUA reads the three counters and grants
// as many of a batch's requests as every window still has room for (possibly none), incrementing each
// counter by that number: atomic, one round trip, no refunds. Requests for the same key arriving within
// one turn of the event loop form one batch (under load a dozen or more: one script run instead of a dozen).
// The outcome is exactly that of running the requests one by one in arrival order: the first `granted`
// are counted, the rest refused by the first window (minute, day, month) without room, consuming nothing.
// The minute counter is a fixed 60 s window (PEXPIRE on its first increment, like rate-limiter-flexible's
// RateLimiterRedis); day and month counters expire an hour after their window.
// Keys: `<prefix>{key_id}:m`, `<prefix>{key_id}:d:2026-11-22`, `<prefix>{key_id}:m:2026-11` (the braces are
// a Redis Cluster hash tag: one API key's counters share a slot).
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

/**
 * KEYS: minute counter, then n calendar counters. ARGV: minute limit, window ms, n calendar limits,
 * n EXPIREAT seconds, requests wanted. Returns {granted, minute pttl, minute count, counts...}, the counts
 * after the increments.
 */
const CONSUME_LUA = `
local n = #KEYS
local counts = {}
for i = 1, n do counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0') end
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then
  counts[1] = 0
  redis.call('DEL', KEYS[1])
end
local granted = tonumber(ARGV[2 * n + 1])
local room = tonumber(ARGV[1]) - counts[1]
if room < granted then granted = room end
for i = 2, n do
  room = tonumber(ARGV[i + 1]) - counts[i]
  if room < granted then granted = room end
end
if granted < 0 then granted = 0 end
if granted > 0 then
  counts[1] = redis.call('INCRBY', KEYS[1], granted)
  if pttl < 0 then
    pttl = tonumber(ARGV[2])
    redis.call('PEXPIRE', KEYS[1], pttl)
  end
  for i = 2, n do
    counts[i] = redis.call('INCRBY', KEYS[i], granted)
    redis.call('EXPIREAT', KEYS[i], ARGV[n + i])
  end
end
local out = {granted, pttl}
for i = 1, n do out[i + 2] = counts[i] end
return out
`;

/** KEYS: minute counter, then calendar counters. Returns {minute pttl, minute count, counts...}. */
const READ_LUA = `
local out = {redis.call('PTTL', KEYS[1])}
for i = 1, #KEYS do out[i + 1] = tonumber(redis.call('GET', KEYS[i]) or '0') end
return out
`;

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

const minuteState = (pttl: number, used: number) => (pttl > 0 ? { used, resetMs: pttl } : { used: 0, resetMs: MINUTE_MS });

/** Requests for the same windows and limits waiting for one script run. */
interface Batch {
  w: LimitWindows;
  waiters: Array<(r: TakeResult) => void>;
}

/** Requests share a batch only when every counter key and limit is the same. */
function batchId(w: LimitWindows): string {
  let id = `${w.minute.key} ${w.minute.limit}`;
  for (const c of w.calendar) id += ` ${c.key} ${c.limit}`;
  return id;
}

/**
 * The result of the i-th request (0-based) of a batch, as if the requests had run one by one: the script
 * returned the counts after `granted` increments.
 */
function resultOf(w: LimitWindows, i: number, granted: number, pttl: number, minuteAfter: number, after: number[]): TakeResult {
  if (i < granted) {
    const back = granted - 1 - i;
    return { refused: -1, minute: minuteState(pttl, minuteAfter - back), counts: after.map((c) => c - back) };
  }
  // Refused requests count nothing: each sees the counts after the granted ones, and at least one window
  // is then full (otherwise the script would have granted it). The first full one, in order, refuses.
  let refused = 0;
  if (minuteAfter < w.minute.limit) {
    refused = 1 + w.calendar.findIndex((c, k) => after[k] >= c.limit);
  }
  return { refused, minute: minuteState(pttl, minuteAfter), counts: after };
}

export function createRedisCounters(opts: RedisCountersOptions): RedisCounterStore {
  if (!opts.client && !opts.url) throw new Error('createRedisCounters needs a url or a client');
  const owned = !opts.client;
  const client = opts.client ?? createRedisClient(opts.url!, opts);
  const prefix = opts.keyPrefix ?? 'vls:';
  const now = opts.now ?? Date.now;
  client.defineCommand('vlsConsume', { lua: CONSUME_LUA });
  client.defineCommand('vlsUsage', { lua: READ_LUA });
  const scripts = client as unknown as { vlsConsume: Script; vlsUsage: Script };

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

  const pending = new Map<string, Batch>();

  function flush(): void {
    const batches = [...pending.values()];
    pending.clear();
    for (const b of batches) void run(b);
  }

  async function run({ w, waiters }: Batch): Promise<void> {
    const n = w.calendar.length;
    let reply: number[];
    try {
      const args: (string | number)[] = [prefix + w.minute.key];
      for (const c of w.calendar) args.push(prefix + c.key);
      args.push(w.minute.limit, MINUTE_MS);
      for (const c of w.calendar) args.push(c.limit);
      for (const c of w.calendar) args.push(Math.ceil(c.expiresAt / 1000) + GRACE_SECONDS);
      args.push(waiters.length);
      reply = await scripts.vlsConsume(n + 1, ...args);
    } catch (err) {
      failed(err);
      for (const resolve of waiters) resolve(await takeLocally(insurance, local, w));
      return;
    }
    const [granted, pttl, minuteAfter, ...after] = reply;
    for (let i = 0; i < n; i++) local.observe(w.calendar[i].key, after[i], w.calendar[i].expiresAt);
    ok = true;
    waiters.forEach((resolve, i) => resolve(resultOf(w, i, granted, pttl, minuteAfter, after)));
  }

  const prune = setInterval(() => local.prune(now() - GRACE_SECONDS * 1000), 60_000);
  prune.unref();

  return {
    take(w: LimitWindows): Promise<TakeResult> {
      if (client.status !== 'ready' || merging !== null) {
        ok = false;
        return takeLocally(insurance, local, w);
      }
      const id = batchId(w);
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
          return { minute: minuteState(pttl, minuteUsed), counts };
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
      client.off('ready', onReady);
      client.off('close', onClose);
      if (owned) await closeClient(client);
    },
  };
}
