// In-process counting with rate-limiter-flexible's RateLimiterMemory: the embedded store, the cluster primary, Redis insurance.
import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import { MINUTE_SECONDS, UNBOUNDED_POINTS, type CountOptions } from './counter-store.js';

/**
 * The per-minute window. No key prefix: the limiter then looks the caller's key up as given, a string made once
 * per API key, instead of hashing a new `prefix:key` string on every request.
 */
export function createMinuteLimiter(keyPrefix = ''): RateLimiterMemory {
  return new RateLimiterMemory({ keyPrefix, points: UNBOUNDED_POINTS, duration: MINUTE_SECONDS });
}

/** Counters live without a timer: RateLimiterMemory's own expiry is a setTimeout, which Node caps at 24.8 days. */
const NO_TIMER = { customDuration: 0 };

export interface CalendarRow {
  key: string;
  count: number;
  /** When the counter's period ends (epoch ms): the counter is forgotten then. */
  expiresAt: number;
}

/**
 * Calendar counters in memory. A month is longer than a Node timer can wait, so the end of each counter's period
 * is kept here (from `customDuration` on its first count) and ended counters are dropped by prune(); the keys
 * counted since the last takeChanged() are kept for persistence (src/adapters/limits/sqlite-counters.ts).
 */
export class CalendarLimiter extends RateLimiterMemory {
  private readonly ends = new Map<string, number>();
  private changed = new Set<string>();

  constructor(keyPrefix = '') {
    super({ keyPrefix, points: UNBOUNDED_POINTS, duration: MINUTE_SECONDS });
  }

  private note(key: string | number, options?: CountOptions): void {
    const k = String(key);
    if (!this.ends.has(k)) this.ends.set(k, Date.now() + (options?.customDuration ?? MINUTE_SECONDS) * 1000);
    this.changed.add(k);
  }

  override consume(key: string | number, points = 1, options?: CountOptions): Promise<RateLimiterRes> {
    this.note(key, options);
    return super.consume(key, points, NO_TIMER);
  }

  override reward(key: string | number, points = 1, options?: CountOptions): Promise<RateLimiterRes> {
    this.note(key, options);
    return super.reward(key, points, NO_TIMER);
  }

  /** Counters changed since the last call, with their current values; the next call starts afresh. */
  async takeChanged(): Promise<CalendarRow[]> {
    const keys = this.changed;
    this.changed = new Set();
    const rows: CalendarRow[] = [];
    for (const key of keys) {
      const res = await this.get(key);
      const expiresAt = this.ends.get(key);
      if (res && expiresAt !== undefined) rows.push({ key, count: res.consumedPoints, expiresAt });
    }
    return rows;
  }

  /** Give keys back to the next takeChanged() (their write failed). */
  markChanged(keys: readonly string[]): void {
    for (const k of keys) if (this.ends.has(k)) this.changed.add(k);
  }

  /** Load counters (a restart): rate-limiter-flexible's restore() of a dump, without its timers. */
  load(rows: readonly CalendarRow[], nowMs = Date.now()): void {
    const live = rows.filter((r) => r.expiresAt > nowMs);
    for (const r of live) this.ends.set(r.key, r.expiresAt);
    this.restore({ version: 1, storage: live.map((r) => ({ key: r.key, value: r.count, expiresAt: null })) });
  }

  /** Forget counters whose period ended before `nowMs`. */
  prune(nowMs = Date.now()): void {
    for (const [key, end] of this.ends) {
      if (end > nowMs) continue;
      this.ends.delete(key);
      this.changed.delete(key);
      void this.delete(key);
    }
  }

  get size(): number {
    return this.ends.size;
  }
}
