// Requests reserved ahead in Redis for one API key's windows: admitted with no round trip while far from every limit.
//
// A grant may reserve extra units (at most RESERVE_MAX, and at most 1/RESERVE_DIVISOR of the least headroom
// left, so none near a limit): Redis counts them at once, so N instances together never admit more than a
// limit; an instance admits from its reserve synchronously and tops it up in the background when half is
// used. Unused units go back to Redis when the key is idle for RESERVE_IDLE_MS, when their minute window
// closes, and on close. Pure bookkeeping: the Redis calls are the caller's.
import type { LimitWindows, TakeResult } from './counter-store.js';

/**
 * Most units one grant reserves. A top-up starts at half a reserve, so half of it must outlast the round trip
 * to Redis while the host is busy: with 100, a BIC load of ~10k req/s on two cores ran the reserve dry between
 * top-ups (every request then waits for Redis and the event loop idles), at 97 us CPU per request against 77 us
 * with 400, which matches the embedded store (services alternated under one load; BENCHMARKS.md, sixth session).
 */
export const RESERVE_MAX = 400;
/** A grant reserves at most this fraction (1/16) of the headroom left: below 16 requests of room, none. */
export const RESERVE_DIVISOR = 16;
/** A key's unused units go back to Redis after this long without a request. */
export const RESERVE_IDLE_MS = 1000;
/** Units are used only while their minute window has at least this long to run (clocks differ a little). */
const WINDOW_MARGIN_MS = 50;
/** Two minute-window ends this close are the same window. */
const SAME_WINDOW_MS = 1000;

export interface Reserve {
  w: LimitWindows;
  /** Reserved in Redis, not used yet. */
  units: number;
  /** Local time at which the Redis minute window holding the units closes. */
  minuteEndsAt: number;
  /** Counts in Redis after the last grant, every instance's reservations included. */
  minuteAfter: number;
  after: number[];
  /** Units reserved by the last grant: a top-up starts when the reserve falls to half of it. */
  size: number;
  refilling: boolean;
  lastUsed: number;
}

export class Reserves {
  private readonly byId = new Map<string, Reserve>();

  /** `release` gives a retired reserve's unused units back to Redis. */
  constructor(private readonly release: (r: Reserve, units: number) => void) {}

  /**
   * Admit one request from the reserve of these windows when it has a unit in an open minute window;
   * null when the request must go to Redis. Calls `refill` once the reserve is down to half its last grant.
   */
  use(id: string, now: number, refill: (r: Reserve) => void): TakeResult | null {
    const r = this.byId.get(id);
    if (!r || r.units === 0) return null;
    if (now >= r.minuteEndsAt - WINDOW_MARGIN_MS) {
      this.retire(id, r);
      return null;
    }
    r.units--;
    r.lastUsed = now;
    if (!r.refilling && r.units <= r.size / 2) {
      r.refilling = true;
      refill(r);
    }
    // What this instance knows: the counts at the last grant, less the units it has not used yet.
    const units = r.units;
    return { refused: -1, minute: { used: r.minuteAfter - units, resetMs: r.minuteEndsAt - now }, counts: r.after.map((c) => c - units) };
  }

  /** Record a grant: its reserved units (possibly none) and the counts after it. */
  credit(id: string, w: LimitWindows, reserved: number, pttl: number, minuteAfter: number, after: number[], now: number): void {
    const endsAt = now + pttl;
    let r = this.byId.get(id);
    if (r && Math.abs(r.minuteEndsAt - endsAt) >= SAME_WINDOW_MS) {
      this.retire(id, r);
      r = undefined;
    }
    if (!r) {
      if (reserved === 0 || pttl <= 0) return;
      r = { w, units: 0, minuteEndsAt: endsAt, minuteAfter, after, size: 0, refilling: false, lastUsed: now };
      this.byId.set(id, r);
    }
    r.units += reserved;
    r.minuteEndsAt = endsAt;
    r.minuteAfter = minuteAfter;
    r.after = after;
    r.size = reserved;
  }

  /** Unused units of these windows' reserve. */
  unitsOf(id: string): number {
    return this.byId.get(id)?.units ?? 0;
  }

  /** Units held against these counters, to leave out of a usage read: [minute, ...calendar]. */
  held(minuteKey: string, calendarKeys: readonly string[], minuteEndsAt: number): number[] {
    const out = [0, ...calendarKeys.map(() => 0)];
    for (const r of this.byId.values()) {
      if (r.w.minute.key !== minuteKey || r.units === 0) continue;
      if (Math.abs(r.minuteEndsAt - minuteEndsAt) < SAME_WINDOW_MS) out[0] += r.units;
      for (const c of r.w.calendar) {
        const k = calendarKeys.indexOf(c.key);
        if (k >= 0) out[k + 1] += r.units;
      }
    }
    return out;
  }

  /** Retire the reserves of keys idle since before `cutoff` (a top-up in flight keeps one); all of them with no cutoff. */
  sweep(cutoff = Infinity): void {
    for (const [id, r] of this.byId) if (cutoff === Infinity || (r.lastUsed < cutoff && !r.refilling)) this.retire(id, r);
  }

  private retire(id: string, r: Reserve): void {
    this.byId.delete(id);
    const units = r.units;
    r.units = 0;
    if (units > 0) this.release(r, units);
  }
}
