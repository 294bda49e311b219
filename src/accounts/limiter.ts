// Per-key rate limit and quotas (docs/limits.md): minute, UTC day, UTC month; IETF RateLimit header fields.
import type { CounterStore, CountOptions } from '../adapters/limits/counter-store.js';
import { MINUTE_SECONDS } from '../adapters/limits/counter-store.js';
import type { KeyRecord } from '../adapters/keys/key-store.js';
import { secondsUntil, utcDay, utcMonth, type UtcWindow } from '../domain/utc-windows.js';
import { ApiError, serviceUnavailable } from '../errors.js';
import type { Limiter, LimitOutcome, WindowUsage } from './limits.js';
import { createSmtpQuota } from './smtp-quota.js';

export interface LimitValues {
  perMinute: number;
  perDay: number;
  perMonth: number;
}

export interface LimiterOptions {
  /** RATE_LIMIT_PER_MINUTE, QUOTA_PER_DAY, QUOTA_PER_MONTH: used where a key's own limit is null. */
  defaults: LimitValues;
  counters: CounterStore;
  /** SMTP_DAILY_PER_KEY: SMTP verifications per UTC day where a key's own `smtpPerDay` is null (default 1000). */
  smtpPerDay?: number;
  /** Clock for the calendar windows (the per-minute window runs on the counters' clock). */
  now?: () => number;
}

/** The key's own limits, or the server defaults where it has none. */
function effectiveLimits(key: KeyRecord, defaults: LimitValues): LimitValues {
  return {
    perMinute: key.perMinute ?? defaults.perMinute,
    perDay: key.perDay ?? defaults.perDay,
    perMonth: key.perMonth ?? defaults.perMonth,
  };
}

/** A calendar counter outlives its period by this long (its key names the period, so it is never reused). */
const CALENDAR_GRACE_SECONDS = 60;

type Window = 'minute' | 'day' | 'month';

/** The counts one answer is explained from (after this request where it was counted). */
interface Counts {
  minute: number;
  /** ms until the minute window closes; 0 when none is open. */
  minuteResetMs: number;
  day: number;
  month: number;
}

const remaining = (limit: number, used: number): number => Math.max(0, limit - used);
const minuteResetS = (c: Counts): number => (c.minuteResetMs > 0 ? Math.ceil(c.minuteResetMs / 1000) : MINUTE_SECONDS);

function headersOf(limits: LimitValues, c: Counts): Record<string, string> {
  return {
    'RateLimit-Limit': String(limits.perMinute),
    'RateLimit-Remaining': String(remaining(limits.perMinute, c.minute)),
    'RateLimit-Reset': String(minuteResetS(c)),
    'X-Quota-Daily-Remaining': String(remaining(limits.perDay, c.day)),
    'X-Quota-Monthly-Remaining': String(remaining(limits.perMonth, c.month)),
  };
}

/** A key's limits, counter keys and calendar windows: made once per key and period, never mutated. */
interface Prepared {
  limits: LimitValues;
  day: UtcWindow;
  month: UtcWindow;
  minuteKey: string;
  dayKey: string;
  monthKey: string;
}

/** How many units would fit now in every window (the counts before the refused request). */
const unitsThatFit = (l: LimitValues, c: Counts): number =>
  Math.min(remaining(l.perMinute, c.minute), remaining(l.perDay, c.day), remaining(l.perMonth, c.month));

/**
 * The 429 of the refusing window, Retry-After at its end. A request of several units (a bulk request, openapi.yaml
 * `x-counted: items`) also says how many items would fit now.
 */
function refusal(p: Prepared, c: Counts, window: Window, now: number, points: number): ApiError {
  const err = windowRefusal(p, c, window, now);
  if (points === 1) return err;
  const fit = unitsThatFit(p.limits, c);
  const detail = `${points} items need ${points} requests of the limits; ${fit} would fit now`;
  return new ApiError(429, err.code, `${err.message}; ${fit} of the ${points} items would fit now`, {
    retryAfter: err.retryAfter,
    headers: err.headers,
    details: [{ field: 'items', message: detail }],
  });
}

function windowRefusal(p: Prepared, c: Counts, window: Window, now: number): ApiError {
  const retryAfter =
    window === 'minute' ? Math.max(1, minuteResetS(c)) : secondsUntil(window === 'day' ? p.day.endsAt : p.month.endsAt, now, 1);
  const opts = { retryAfter, headers: { ...headersOf(p.limits, c), 'Retry-After': String(retryAfter) } };
  const l = p.limits;
  if (window === 'minute') {
    return new ApiError(429, 'RATE_LIMIT_EXCEEDED', `rate limit of ${l.perMinute} requests per minute exceeded; try again later (in ${retryAfter} s)`, opts);
  }
  if (window === 'day') return new ApiError(429, 'DAILY_QUOTA_EXCEEDED', `daily quota of ${l.perDay} requests exhausted; it resets at 00:00 UTC`, opts);
  return new ApiError(429, 'QUOTA_EXCEEDED', `monthly quota of ${l.perMonth} requests exhausted; it resets on the first day of next month, 00:00 UTC`, opts);
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

const MAX_PREPARED = 10_000;

const sameLimits = (l: LimitValues, key: KeyRecord, d: LimitValues): boolean =>
  l.perMinute === (key.perMinute ?? d.perMinute) && l.perDay === (key.perDay ?? d.perDay) && l.perMonth === (key.perMonth ?? d.perMonth);

/** A key's limits, windows and counter keys at `now`, kept per key until its limits or the day or month change. */
function preparer(defaults: LimitValues, clock: () => number): (key: KeyRecord, now: number) => Prepared {
  // The current day and month, recomputed only when the clock leaves them (not on every request).
  let day = utcDay(clock());
  let month = utcMonth(clock());
  const prepared = new Map<string, Prepared>();
  return (key, now) => {
    if (now < day.startsAt || now >= day.endsAt) day = utcDay(now);
    if (now < month.startsAt || now >= month.endsAt) month = utcMonth(now);
    let p = prepared.get(key.id);
    if (p === undefined || p.day !== day || p.month !== month || !sameLimits(p.limits, key, defaults)) {
      const tag = `{${key.id}}`;
      p = { limits: effectiveLimits(key, defaults), day, month, minuteKey: `${tag}:m`, dayKey: `${tag}:${day.id}`, monthKey: `${tag}:${month.id}` };
      if (prepared.size >= MAX_PREPARED) prepared.clear();
      prepared.set(key.id, p);
    }
    return p;
  };
}

/**
 * Counts the request in the month, day and minute windows at once, one rate-limiter-flexible consume each (in
 * Redis: one round trip), and when any count is over the key's limit gives all three back (reward): a refused
 * request consumes no window, and the refusal names the exhausted window that resets last. Each count is atomic
 * in its store and a request keeps its units only when every count it saw was within its limit, so concurrent
 * requests never get more than a limit admitted (docs/limits.md, docs/adr/0013).
 */
export function createLimiter(opts: LimiterOptions): Limiter {
  const { counters, defaults } = opts;
  const { minute, calendar } = counters;
  const clock = opts.now ?? Date.now;

  const prepare = preparer(defaults, clock);
  const lifetime = (w: UtcWindow, now: number): CountOptions => ({ customDuration: secondsUntil(w.endsAt, now, 1) + CALENDAR_GRACE_SECONDS });
  const used = async (key: string): Promise<number> => (await calendar.get(key))?.consumedPoints ?? 0;

  /** A store that failed without an insurance limiter (a cluster worker whose primary did not answer): 503. */
  const unavailable = (err: unknown): never => {
    if (err instanceof ApiError) throw err;
    throw serviceUnavailable(`usage counters unavailable: ${err instanceof Error ? err.message : String(err)}`);
  };

  /** Count, or refuse; a store's failure is a 503 (caught here rather than by a .catch: one promise less per request). */
  async function count(key: KeyRecord, points: number): Promise<LimitOutcome> {
    try {
      const now = clock();
      const p = prepare(key, now);
      const { limits } = p;
      const monthLife = lifetime(p.month, now);
      const dayLife = lifetime(p.day, now);
      // One round trip to a shared store: the three counts go out together.
      const [m, d, mi] = await Promise.all([
        calendar.consume(p.monthKey, points, monthLife),
        calendar.consume(p.dayKey, points, dayLife),
        minute.consume(p.minuteKey, points),
      ]);
      const c = { minute: mi.consumedPoints, minuteResetMs: mi.msBeforeNext, day: d.consumedPoints, month: m.consumedPoints };
      // The exhausted window that resets last names the refusal.
      const refused: Window | null =
        c.month > limits.perMonth ? 'month' : c.day > limits.perDay ? 'day' : c.minute > limits.perMinute ? 'minute' : null;
      if (refused === null) return { headers: headersOf(limits, c) };
      await Promise.all([
        calendar.reward(p.monthKey, points, monthLife),
        calendar.reward(p.dayKey, points, dayLife),
        minute.reward(p.minuteKey, points),
      ]);
      const before = { minute: c.minute - points, minuteResetMs: c.minuteResetMs, day: c.day - points, month: c.month - points };
      throw refusal(p, before, refused, now, points);
    } catch (err) {
      return unavailable(err);
    }
  }

  const smtp = createSmtpQuota({ calendar, smtpPerDay: opts.smtpPerDay ?? 1000, now: clock, unavailable });

  return {
    consumeSmtp: smtp.consume,

    consume: (key, points = 1) =>
      Number.isSafeInteger(points) && points >= 1
        ? count(key, points)
        : Promise.reject(new RangeError(`points must be a positive integer, not ${points}`)),

    async peek(key: KeyRecord) {
      const now = clock();
      const p = prepare(key, now);
      const [mi, d, m, s] = await Promise.all([minute.get(p.minuteKey), used(p.dayKey), used(p.monthKey), smtp.peek(key, now)]).catch(unavailable);
      const c = { minute: mi && mi.msBeforeNext > 0 ? mi.consumedPoints : 0, minuteResetMs: mi?.msBeforeNext ?? 0, day: d, month: m };
      return {
        headers: headersOf(p.limits, c),
        usage: {
          minute: windowUsage(p.limits.perMinute, c.minute, c.minuteResetMs > 0 ? c.minuteResetMs : MINUTE_SECONDS * 1000, now),
          day: windowUsage(p.limits.perDay, d, p.day.endsAt - now, now),
          month: windowUsage(p.limits.perMonth, m, p.month.endsAt - now, now),
          smtpDay: windowUsage(s.limit, s.used, s.day.endsAt - now, now),
        },
      };
    },

    healthy: () => counters.healthy(),
    close: () => counters.close(),
  };
}
