// Usage counters port: rate-limiter-flexible limiters for the per-minute window and the UTC calendar windows (docs/limits.md).
import type { RateLimiterRes } from 'rate-limiter-flexible';

/** Length of the per-minute window in seconds: a fixed window opened by the first request counted in it. */
export const MINUTE_SECONDS = 60;

/**
 * Points of every limiter: never reached. Keys carry their own limits (the keys CLI changes them while counts
 * stand), so the policy (src/accounts/limiter.ts) compares `consumedPoints` with the key's limit itself.
 */
export const UNBOUNDED_POINTS = Number.MAX_SAFE_INTEGER;

export interface CountOptions {
  /** Seconds the counter lives when this call creates it (rate-limiter-flexible `customDuration`). */
  customDuration?: number;
}

/**
 * The part of rate-limiter-flexible's limiter API the policy uses; RateLimiterMemory, RateLimiterRedis and
 * RateLimiterCluster all provide it. `consume` resolves with the count after adding (points are unbounded).
 */
export interface WindowCounter {
  consume(key: string, points?: number, options?: CountOptions): Promise<RateLimiterRes>;
  reward(key: string, points?: number, options?: CountOptions): Promise<RateLimiterRes>;
  get(key: string): Promise<RateLimiterRes | null>;
}

export interface CounterStore {
  /** The per-minute window: a counter per API key that expires MINUTE_SECONDS after it was opened. */
  minute: WindowCounter;
  /**
   * Calendar counters (UTC day, UTC month): the period is in the key (`{key_id}:d:2026-11-22`), and the caller
   * passes the seconds to the period's end as `customDuration`, so a new period starts a new counter.
   */
  calendar: WindowCounter;
  /** False while the backing store is unreachable and counting is degraded to this process. */
  healthy(): boolean;
  /** Shared stores: requests this process counted alone since start, because the store did not answer. */
  countedAlone?(): number;
  close(): Promise<void>;
}
