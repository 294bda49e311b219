// Shared usage counters on Redis: minute, day and month checked and counted by one Lua script per request.
//
// Every instance on the same Redis enforces one limit. CONSUME_LUA reads the three counters, refuses when
// one is at its limit (counting nothing) and otherwise increments all three: atomic, one round trip, no
// refunds. The minute counter is a fixed 60 s window (PEXPIRE on its first increment, like
// rate-limiter-flexible's RateLimiterRedis); day and month counters expire an hour after their window.
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
 * n EXPIREAT seconds. Returns {refused (0 none, 1 minute, 1 + i calendar i), minute pttl, minute count, counts...}.
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
local function reply(refused)
  local out = {refused, pttl}
  for i = 1, n do out[i + 2] = counts[i] end
  return out
end
if counts[1] + 1 > tonumber(ARGV[1]) then return reply(1) end
for i = 2, n do
  if counts[i] + 1 > tonumber(ARGV[i + 1]) then return reply(i) end
end
counts[1] = redis.call('INCR', KEYS[1])
if pttl < 0 then
  pttl = tonumber(ARGV[2])
  redis.call('PEXPIRE', KEYS[1], pttl)
end
for i = 2, n do
  counts[i] = redis.call('INCR', KEYS[i])
  redis.call('EXPIREAT', KEYS[i], ARGV[n + i])
end
return reply(0)
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

  const prune = setInterval(() => local.prune(now() - GRACE_SECONDS * 1000), 60_000);
  prune.unref();

  return {
    async take(w: LimitWindows): Promise<TakeResult> {
      if (client.status === 'ready' && merging === null) {
        try {
          const n = w.calendar.length;
          const args: (string | number)[] = [prefix + w.minute.key];
          for (const c of w.calendar) args.push(prefix + c.key);
          args.push(w.minute.limit, MINUTE_MS);
          for (const c of w.calendar) args.push(c.limit);
          for (const c of w.calendar) args.push(Math.ceil(c.expiresAt / 1000) + GRACE_SECONDS);
          const [refused, pttl, minuteUsed, ...counts] = await scripts.vlsConsume(n + 1, ...args);
          for (let i = 0; i < n; i++) local.observe(w.calendar[i].key, counts[i], w.calendar[i].expiresAt);
          ok = true;
          return { refused: refused - 1, minute: minuteState(pttl, minuteUsed), counts };
        } catch (err) {
          failed(err);
        }
      } else {
        ok = false;
      }
      return takeLocally(insurance, local, w);
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
