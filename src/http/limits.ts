// Per-key rate limit and quotas port (INTERFACE.md section 8): checked after authentication, before the handler.
import type { KeyRecord } from '../adapters/key-store.js';

export interface LimitOutcome {
  /** RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Quota-Daily-Remaining, X-Quota-Monthly-Remaining. */
  headers: Record<string, string>;
}

export interface Limiter {
  /**
   * Count one request for the key, in the order minute, day, month. Throws ApiError 429
   * (RATE_LIMIT_EXCEEDED, DAILY_QUOTA_EXCEEDED or QUOTA_EXCEEDED, with Retry-After) when a window is exhausted;
   * a refused request consumes none of the other windows.
   */
  consume(key: KeyRecord): Promise<LimitOutcome>;
  /** Whether the counters' store is reachable; false while degraded to in-memory limits. */
  healthy(): boolean;
  close(): Promise<void>;
}

/** No limits at all: for tests of other behaviour and for benchmarks of the bare path. */
export const unlimited: Limiter = {
  consume: async () => ({ headers: {} }),
  healthy: () => true,
  close: async () => {},
};
