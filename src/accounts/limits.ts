// Per-key rate limit and quotas port (openapi.yaml, RateLimit headers and 429 answers): checked after authentication, before the handler.
import type { KeyRecord } from '../adapters/keys/key-store.js';
import { notFound } from '../errors.js';

export interface LimitOutcome {
  /** RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Quota-Daily-Remaining, X-Quota-Monthly-Remaining. */
  headers: Record<string, string>;
}

export interface Limiter {
  /**
   * Count one request for the key in the minute, day and month windows. Throws ApiError 429
   * (RATE_LIMIT_EXCEEDED, DAILY_QUOTA_EXCEEDED or QUOTA_EXCEEDED, with Retry-After) when a window is exhausted,
   * naming the exhausted window that resets last; a refused request consumes none of the windows.
   * `points` (default 1) counts that many requests at once, all or nothing (a bulk request of N items counts N,
   * rate-limiter-flexible's consume(key, points)); its refusal says how many would fit now.
   */
  consume(key: KeyRecord, points?: number): Promise<LimitOutcome>;
  /**
   * Count `n` SMTP mailbox verifications for the key in its UTC-day SMTP quota (the key's `smtpPerDay`, else
   * SMTP_DAILY_PER_KEY; docs/limits.md), all or nothing: over it, ApiError 429 SMTP_QUOTA_EXCEEDED with Retry-After
   * (the day's end) and nothing counted. A request asking `smtp=true` charges its addresses here before any is verified;
   * the jobs capability charges a job's addresses at submission.
   */
  consumeSmtp(key: KeyRecord, n: number): Promise<SmtpQuota>;
  /** The key's usage and limit headers, counting nothing (GET /api/v1/usage). */
  peek(key: KeyRecord): Promise<LimitOutcome & { usage: UsageSnapshot }>;
  /** Whether the counters' store is reachable; false while degraded to in-memory limits. */
  healthy(): boolean;
  close(): Promise<void>;
}

/** The key's SMTP quota for the UTC day after a charge. */
export interface SmtpQuota {
  limit: number;
  remaining: number;
}

export interface WindowUsage {
  limit: number;
  used: number;
  remaining: number;
  /** When the window resets, ISO 8601 UTC. */
  resetAt: string;
  resetInSeconds: number;
}

interface UsageSnapshot {
  minute: WindowUsage;
  day: WindowUsage;
  month: WindowUsage;
  /** The daily SMTP verification quota. */
  smtpDay: WindowUsage;
}

/** RATE_LIMITS=off: no limits at all (trusted deployments, and benchmarks of the bare path). */
export const unlimited: Limiter = {
  consume: async () => ({ headers: {} }),
  consumeSmtp: async () => ({ limit: Infinity, remaining: Infinity }),
  peek: async () => {
    throw notFound('rate limits and quotas are disabled on this server');
  },
  healthy: () => true,
  close: async () => {},
};
