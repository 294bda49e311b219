// Shared usage counters on Redis: rate-limiter-flexible RateLimiterRedis (atomic INCR with TTL), in-memory insurance.
//
// Every instance on the same Redis counts one limit: each count is one atomic script run of
// rate-limiter-flexible. Keys: `<prefix>:{key_id}:m` (the minute window), `<prefix>:{key_id}:d:2026-11-22`
// and `<prefix>:{key_id}:m:2026-11` (calendar counters; they expire a minute after their period).
//
// Redis unreachable (connection lost, command timeout): requests keep being answered. Each limiter's
// `insuranceLimiter` (RateLimiterMemory) counts in this process instead, so N instances may admit up to N times
// a limit while degraded, and an instance's calendar counts start from zero there. A PING every `checkMs` decides
// healthy() (GET /readyz reports it); while it fails, counts go to the insurance limiters at once instead of
// waiting for a command timeout on every request. Once Redis answers again, counting goes back to Redis without
// a restart (what the instances counted alone meanwhile is not added to Redis).
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { MINUTE_SECONDS, UNBOUNDED_POINTS, type CounterStore, type CountOptions, type WindowCounter } from './counter-store.js';
import { CalendarLimiter } from './local-counters.js';
import { closeClient, createRedisClient, redisAttributes, waitForReady, type RedisClientOptions } from '../redis/redis-client.js';
import { traced } from '../tracing/spans.js';

export interface RedisCountersOptions extends RedisClientOptions {
  /** REDIS_URL; ignored when `client` is given. */
  url?: string;
  /** An existing client (not closed by close()). */
  client?: Redis;
  /** Prefix of every Redis key; default `vls`. */
  keyPrefix?: string;
  /** How often Redis is pinged for healthy(); default 500 ms. */
  checkMs?: number;
  logger?: { warn: (obj: object, msg?: string) => void; info?: (obj: object, msg?: string) => void };
}

export interface RedisCounterStore extends CounterStore {
  /** Resolves when connected (rejects after timeoutMs; counting works meanwhile, degraded). */
  ready(timeoutMs?: number): Promise<void>;
}

/** The minute insurance limiter, counting the requests this process counts alone. */
class CountingInsurance extends RateLimiterMemory {
  used = 0;
  override consume(key: string | number, points?: number, options?: CountOptions): Promise<RateLimiterRes> {
    this.used++;
    return super.consume(key, points, options);
  }
}

/** `redis` while Redis answers its PING, else `insurance` directly. */
function routed(redis: RateLimiterRedis, insurance: RateLimiterMemory, up: () => boolean, attributes: Record<string, string | number>): WindowCounter {
  return {
    // rate-limiter-flexible counts with one script (EVALSHA) a window.
    consume: (key, points, options) =>
      up() ? traced('EVALSHA', attributes, () => redis.consume(key, points, options)) : insurance.consume(key, points, options),
    reward: (key, points, options) => (up() ? redis : insurance).reward(key, points, options),
    get: (key) => (up() ? redis : insurance).get(key),
  };
}

export function createRedisCounters(opts: RedisCountersOptions): RedisCounterStore {
  if (!opts.client && !opts.url) throw new Error('createRedisCounters needs a url or a client');
  const owned = !opts.client;
  const client = opts.client ?? createRedisClient(opts.url!, opts);
  const keyPrefix = opts.keyPrefix ?? 'vls';

  const minuteInsurance = new CountingInsurance({ keyPrefix: '', points: UNBOUNDED_POINTS, duration: MINUTE_SECONDS });
  const calendarInsurance = new CalendarLimiter();
  const common = { storeClient: client, keyPrefix, points: UNBOUNDED_POINTS, duration: MINUTE_SECONDS, rejectIfRedisNotReady: true };
  const minute = new RateLimiterRedis({ ...common, insuranceLimiter: minuteInsurance });
  const calendar = new RateLimiterRedis({ ...common, insuranceLimiter: calendarInsurance });

  let ok = client.status === 'ready';
  const up = (): boolean => ok && client.status === 'ready';
  const set = (value: boolean, err?: unknown): void => {
    if (ok && !value) opts.logger?.warn({ err: String(err ?? 'redis connection closed') }, 'redis unreachable: limits counted per instance');
    if (!ok && value) opts.logger?.info?.({}, 'redis answers again: limits counted in redis');
    ok = value;
  };
  let checking = false;
  const check = (): void => {
    if (checking) return;
    if (client.status !== 'ready') return set(false);
    checking = true;
    client.ping().then(
      () => set(true),
      (err: unknown) => set(false, err),
    ).finally(() => (checking = false));
  };
  const onClose = (): void => set(false);
  client.on('ready', check);
  client.on('close', onClose);
  const timer = setInterval(check, opts.checkMs ?? 500);
  timer.unref();
  check();

  const calendarPrune = setInterval(() => calendarInsurance.prune(), 60_000);
  calendarPrune.unref();

  return {
    minute: routed(minute, minuteInsurance, up, redisAttributes(client, 'EVALSHA')),
    calendar: routed(calendar, calendarInsurance, up, redisAttributes(client, 'EVALSHA')),
    healthy: up,
    countedAlone: () => minuteInsurance.used,
    async ready(timeoutMs) {
      await waitForReady(client, timeoutMs);
      await client.ping();
      set(true);
    },
    async close() {
      clearInterval(timer);
      clearInterval(calendarPrune);
      client.off('ready', check);
      client.off('close', onClose);
      if (owned) await closeClient(client);
    },
  };
}
