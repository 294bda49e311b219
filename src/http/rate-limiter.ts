// Per-key rate limit and quotas (INTERFACE.md section 8): minute, UTC day, UTC month; IETF RateLimit header fields.
import type { CounterStore, LimitWindows, TakeResult, UsageCounts } from '../adapters/counter-store.js';
import type { KeyRecord } from '../adapters/key-store.js';
import { secondsUntil, utcDay, utcMonth, type UtcWindow } from '../domain/utc-windows.js';
import { ApiError } from './errors.js';
import type { Limiter, LimitOutcome, UsageSnapshot, WindowUsage } from './limits.js';

export interface LimitValues {
  perMinute: number;
  perDay: number;
  perMonth: number;
}

export interface LimiterOptions {
  /** RATE_LIMIT_PER_MINUTE, QUOTA_PER_DAY, QUOTA_PER_MONTH: used where a key's own limit is null. */
  defaults: LimitValues;
  counters: CounterStore;
  /** Clock for the calendar windows (the per-minute window runs on the store's clock). */
  now?: () => number;
}

export type { UsageSnapshot, WindowUsage };

/** The key's own limits, or the server defaults where it has none. */
export function effectiveLimits(key: KeyRecord, defaults: LimitValues): LimitValues {
  return {
    perMinute: key.perMinute ?? defaults.perMinute,
    perDay: key.perDay ?? defaults.perDay,
    perMonth: key.perMonth ?? defaults.perMonth,
  };
}

/** What a refusal is explained from: the key's limits, the store's counts and the calendar windows. */
interface State {
  limits: LimitValues;
  counted: TakeResult | UsageCounts;
  day: UtcWindow;
  month: UtcWindow;
  now: number;
}

const remaining = (limit: number, used: number): number => Math.max(0, limit - used);

function headersOf(limits: LimitValues, c: TakeResult | UsageCounts): Record<string, string> {
  return {
    'RateLimit-Limit': String(limits.perMinute),
    'RateLimit-Remaining': String(remaining(limits.perMinute, c.minute.used)),
    'RateLimit-Reset': String(Math.max(0, Math.ceil(c.minute.resetMs / 1000))),
    'X-Quota-Daily-Remaining': String(remaining(limits.perDay, c.counts[0])),
    'X-Quota-Monthly-Remaining': String(remaining(limits.perMonth, c.counts[1])),
  };
}

/** What each window is called in a refusal's message. */
const NAMED = {
  minute: (l: LimitValues) => `rate limit of ${l.perMinute} requests per minute`,
  day: (l: LimitValues) => `daily quota of ${l.perDay} requests`,
  month: (l: LimitValues) => `monthly quota of ${l.perMonth} requests`,
};

/**
 * The 429 of the refusing window, Retry-After at its end. `heldMs` (Redis mode): only units other instances
 * hold in reserve stand in the way; they come back within that long, so the answer says so and names that wait.
 */
function refusal(s: State, window: 'minute' | 'day' | 'month', heldMs?: number): ApiError {
  const untilReset =
    window === 'minute'
      ? Math.max(1, Math.ceil(s.counted.minute.resetMs / 1000))
      : secondsUntil(window === 'day' ? s.day.endsAt : s.month.endsAt, s.now, 1);
  const retryAfter = heldMs === undefined ? untilReset : Math.min(untilReset, Math.max(1, Math.ceil(heldMs / 1000)));
  const opts = { retryAfter, headers: { ...headersOf(s.limits, s.counted), 'Retry-After': String(retryAfter) } };
  const named = NAMED[window](s.limits);
  if (heldMs !== undefined) {
    const why = `the rest of the ${named} is held in reserve by other instances of this service, which give back what they do not use within seconds`;
    return new ApiError(429, 'RATE_LIMIT_EXCEEDED', `${why}; try again later (in ${retryAfter} s)`, opts);
  }
  if (window === 'minute') return new ApiError(429, 'RATE_LIMIT_EXCEEDED', `${named} exceeded; try again later (in ${retryAfter} s)`, opts);
  if (window === 'day') return new ApiError(429, 'DAILY_QUOTA_EXCEEDED', `${named} exhausted; it resets at 00:00 UTC`, opts);
  return new ApiError(429, 'QUOTA_EXCEEDED', `${named} exhausted; it resets on the first day of next month, 00:00 UTC`, opts);
}

function windowUsage(limit: number, used: number, resetMs: number, now: number): WindowUsage {
  return {
    limit,
    used,
    remaining: remaining(limit, used),
    resetAt: new Date(now + resetMs).toISOString(),
    resetInSeconds: Math.max(0, Math.ceil(resetMs / 1000)),
  };
}

const WINDOWS = ['minute', 'day', 'month'] as const;

/** A key's limits and counters for one day and month: what the store is asked to count. Never mutated. */
interface Prepared {
  limits: LimitValues;
  day: UtcWindow;
  month: UtcWindow;
  windows: LimitWindows;
  calendarKeys: readonly string[];
}

const MAX_PREPARED = 10_000;

const sameLimits = (l: LimitValues, key: KeyRecord, d: LimitValues): boolean =>
  l.perMinute === (key.perMinute ?? d.perMinute) && l.perDay === (key.perDay ?? d.perDay) && l.perMonth === (key.perMonth ?? d.perMonth);

function prepareKey(key: KeyRecord, limits: LimitValues, day: UtcWindow, month: UtcWindow): Prepared {
  const tag = `{${key.id}}`;
  const dayKey = `${tag}:${day.id}`;
  const monthKey = `${tag}:${month.id}`;
  const windows: LimitWindows = Object.freeze({
    minute: Object.freeze({ key: `${tag}:m`, limit: limits.perMinute }),
    calendar: Object.freeze([
      Object.freeze({ key: dayKey, limit: limits.perDay, expiresAt: day.endsAt }),
      Object.freeze({ key: monthKey, limit: limits.perMonth, expiresAt: month.endsAt }),
    ]),
  });
  return { limits, day, month, windows, calendarKeys: Object.freeze([dayKey, monthKey]) };
}

/**
 * Checks minute, day, month in that order; the store counts all three or, when one is exhausted, none.
 * Counter keys carry the key id in braces (a Redis Cluster hash tag) and the UTC date of their window,
 * so a new day or month starts a new counter exactly at 00:00 UTC.
 */
export function createLimiter(opts: LimiterOptions): Limiter {
  const { counters, defaults } = opts;
  const clock = opts.now ?? Date.now;

  // The current day and month, recomputed only when the clock leaves them (not on every request).
  let day = utcDay(clock());
  let month = utcMonth(clock());
  // Per key: its limits, counter keys and windows, rebuilt when the day, the month or the key's limits change
  // (the three key strings and five objects were made anew for every request). Bounded by the number of keys.
  const prepared = new Map<string, Prepared>();
  const prepare = (key: KeyRecord, now: number): Prepared => {
    if (now < day.startsAt || now >= day.endsAt) day = utcDay(now);
    if (now < month.startsAt || now >= month.endsAt) month = utcMonth(now);
    let p = prepared.get(key.id);
    if (p === undefined || p.day !== day || p.month !== month || !sameLimits(p.limits, key, defaults)) {
      p = prepareKey(key, effectiveLimits(key, defaults), day, month);
      if (prepared.size >= MAX_PREPARED) prepared.clear();
      prepared.set(key.id, p);
    }
    return p;
  };
  return {
    async consume(key: KeyRecord): Promise<LimitOutcome> {
      const now = clock();
      const p = prepare(key, now);
      const r = await counters.take(p.windows);
      if (r.refused >= 0) throw refusal({ limits: p.limits, counted: r, day: p.day, month: p.month, now }, WINDOWS[r.refused], r.retryMs);
      return { headers: headersOf(p.limits, r) };
    },

    async peek(key: KeyRecord) {
      const now = clock();
      const p = prepare(key, now);
      const c = await counters.read(p.windows.minute.key, p.calendarKeys);
      return {
        headers: headersOf(p.limits, c),
        usage: {
          minute: windowUsage(p.limits.perMinute, c.minute.used, c.minute.resetMs, now),
          day: windowUsage(p.limits.perDay, c.counts[0], p.day.endsAt - now, now),
          month: windowUsage(p.limits.perMonth, c.counts[1], p.month.endsAt - now, now),
        },
      };
    },

    healthy: () => counters.healthy(),
    close: () => counters.close(),
  };
}
