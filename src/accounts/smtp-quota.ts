// The per-key daily SMTP verification quota (docs/limits.md, issue #55): a UTC-day calendar counter of its own beside
// the request windows, refused whole with 429 SMTP_QUOTA_EXCEEDED and refunded like them (docs/adr/0013).
import type { CounterStore } from '../adapters/limits/counter-store.js';
import type { KeyRecord } from '../adapters/keys/key-store.js';
import { secondsUntil, utcDay, type UtcWindow } from '../domain/utc-windows.js';
import { ApiError } from '../errors.js';
import type { SmtpQuota } from './limits.js';

interface SmtpQuotaOptions {
  calendar: CounterStore['calendar'];
  /** SMTP_DAILY_PER_KEY: where a key's own `smtpPerDay` is null. */
  smtpPerDay: number;
  now: () => number;
  /** The limiter's answer to a store that failed (503), or a rethrow of an ApiError. */
  unavailable: (err: unknown) => never;
}

/** A counter outlives its day by this long (its key names the day, so it is never reused), as the request windows' do. */
const GRACE_SECONDS = 60;

/** The 429 of an exhausted SMTP quota: `n` verifications asked, `used` already counted today. */
function refusal(limit: number, used: number, n: number, day: UtcWindow, now: number): ApiError {
  const retryAfter = secondsUntil(day.endsAt, now, 1);
  const fit = Math.max(0, limit - used);
  const many = n === 1 ? '' : `; ${fit} of the ${n} addresses would fit now`;
  return new ApiError(429, 'SMTP_QUOTA_EXCEEDED', `daily SMTP verification quota of ${limit} exhausted${many}; it resets at 00:00 UTC`, {
    retryAfter,
    headers: { 'Retry-After': String(retryAfter) },
    ...(n === 1 ? {} : { details: [{ field: 'items', message: `${n} addresses need ${n} SMTP verifications; ${fit} would fit now` }] }),
  });
}

export interface SmtpQuotaCounter {
  consume(key: KeyRecord, n: number): Promise<SmtpQuota>;
  /** Today's limit and count, counting nothing (GET /api/v1/usage). */
  peek(key: KeyRecord, now: number): Promise<{ limit: number; used: number; day: UtcWindow }>;
}

export function createSmtpQuota(o: SmtpQuotaOptions): SmtpQuotaCounter {
  const counterOf = (key: KeyRecord, day: UtcWindow) => `{${key.id}}:smtp:${day.id}`;
  async function count(key: KeyRecord, n: number): Promise<SmtpQuota> {
    try {
      const now = o.now();
      const day = utcDay(now);
      const limit = key.smtpPerDay ?? o.smtpPerDay;
      // The key's hash tag first, as the request windows' keys: one Redis Cluster slot per API key.
      const counter = counterOf(key, day);
      if (n === 0) return { limit, remaining: Math.max(0, limit - ((await o.calendar.get(counter))?.consumedPoints ?? 0)) };
      const life = { customDuration: secondsUntil(day.endsAt, now, 1) + GRACE_SECONDS };
      const { consumedPoints } = await o.calendar.consume(counter, n, life);
      if (consumedPoints <= limit) return { limit, remaining: limit - consumedPoints };
      await o.calendar.reward(counter, n, life);
      throw refusal(limit, consumedPoints - n, n, day, now);
    } catch (err) {
      return o.unavailable(err);
    }
  }
  return {
    async peek(key, now) {
      const day = utcDay(now);
      const used = (await o.calendar.get(counterOf(key, day)))?.consumedPoints ?? 0;
      return { limit: key.smtpPerDay ?? o.smtpPerDay, used, day };
    },
    consume: (key, n) => (Number.isSafeInteger(n) && n >= 0 ? count(key, n) : Promise.reject(new RangeError(`n must be a whole number, not ${n}`))),
  };
}
