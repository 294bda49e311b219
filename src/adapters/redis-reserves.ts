// Requests reserved ahead in Redis for one API key's windows: admitted with no round trip while far from every limit.
//
// A grant may reserve extra units (at most RESERVE_MAX, and at most 1/RESERVE_DIVISOR of the least headroom
// left, so none near a limit): Redis counts them at once, so N instances together never admit more than a
// limit; an instance admits from its reserve synchronously and tops it up in the background when half is
// used. Unused units go back to Redis when the key is idle for RESERVE_IDLE_MS, when their minute window
// closes, and on close. Each reserve has an entry in the key's ledger in Redis (units reserved, units used as
// last reported - a running total, so reports may repeat or cross), so a release gives back exactly what was
// not used and acts once however often it is sent (after an outage, a timeout), gives nothing to a Redis that
// lost its data, and a refusal can tell units held elsewhere from real usage.
// Pure bookkeeping: the Redis calls are the caller's.
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
/** An idle reserve's units are back in Redis within this long: the idle time plus one sweep interval. */
export const RESERVE_RETURN_MS = 2 * RESERVE_IDLE_MS;

export interface Reserve {
  w: LimitWindows;
  /** Its field in the key's reserve ledger in Redis: unique per instance and reserve. */
  gen: string;
  /** Reserved in Redis, not used yet. */
  units: number;
  /** Local time at which the Redis minute window holding the units closes; 0 before a grant answered. */
  minuteEndsAt: number;
  /** Counts in Redis after the last grant, every instance's reservations included. */
  minuteAfter: number;
  after: number[];
  /** Units reserved by the last grant: a top-up starts when the reserve falls to half of it. */
  size: number;
  refilling: boolean;
  /** Script calls under this reserve not answered yet (a reserve is not swept while any is). */
  calls: number;
  /** Units of it used so far (each call reports the running total). */
  used: number;
  /** The ledger may hold an entry for it: a call reserved units, or failed without an answer. */
  ledgered: boolean;
  lastUsed: number;
}

export class Reserves {
  private readonly byId = new Map<string, Reserve>();
  private seq = 0;

  /**
   * `instance` makes ledger fields unique among instances; `release` gives a retired reserve's unused units
   * back to Redis (RELEASE_LUA: once, whatever the retries).
   */
  constructor(
    private readonly instance: string,
    private readonly release: (r: Reserve) => void,
  ) {}

  /** The reserve of these windows, an empty one (no units) when there is none. */
  open(id: string, w: LimitWindows, now: number): Reserve {
    let r = this.byId.get(id);
    if (!r) {
      r = {
        w,
        gen: `${this.instance}.${(this.seq++).toString(36)}`,
        units: 0,
        minuteEndsAt: 0,
        minuteAfter: 0,
        after: [],
        size: 0,
        refilling: false,
        calls: 0,
        used: 0,
        ledgered: false,
        lastUsed: now,
      };
      this.byId.set(id, r);
    }
    return r;
  }

  /** A script call under `r` goes out: returns the units used so far, which it reports. */
  sent(r: Reserve): number {
    r.calls++;
    return r.used;
  }

  /**
   * The call's answer: its grant, or null when it failed (it may have run, so the ledger may hold an entry).
   * `sentAt`: when the call went out; the script ran after, so `sentAt + pttl` never puts the window's end
   * later than Redis has it, however late the answer. A grant in a new minute window retires the reserve
   * (the script reserved nothing under it); otherwise its units are added.
   */
  answered(id: string, r: Reserve, grant: { reserved: number; pttl: number; minuteAfter: number; after: number[] } | null, sentAt: number): void {
    r.calls--;
    if (!grant) {
      r.ledgered = true;
      return;
    }
    // Retired meanwhile: the release sent after this call covers what it reserved.
    if (this.byId.get(id) !== r) return;
    const endsAt = sentAt + grant.pttl;
    // A reserve with a ledger entry stays in its minute window (the script reserves nothing more under it in
    // a new one); one without is taken over by the new window.
    if (r.ledgered && r.minuteEndsAt !== 0 && Math.abs(r.minuteEndsAt - endsAt) >= SAME_WINDOW_MS) {
      this.retire(id, r);
      return;
    }
    if (grant.pttl > 0) r.minuteEndsAt = endsAt;
    if (grant.reserved > 0) r.ledgered = true;
    r.units += grant.reserved;
    r.minuteAfter = grant.minuteAfter;
    r.after = grant.after;
    r.size = grant.reserved;
  }

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
    r.used++;
    r.lastUsed = now;
    if (!r.refilling && r.units <= r.size / 2) {
      r.refilling = true;
      refill(r);
    }
    // What this instance knows: the counts at the last grant, less the units it has not used yet.
    const units = r.units;
    return { refused: -1, minute: { used: r.minuteAfter - units, resetMs: r.minuteEndsAt - now }, counts: r.after.map((c) => c - units) };
  }

  /**
   * A reserve used up while its top-up was out, which reserved nothing more (near a limit): retire it, so the
   * release reports its use and its ledger entry stops claiming units that other instances would wait for.
   */
  retireIfSpent(id: string, r: Reserve): void {
    if (this.byId.get(id) === r && r.units === 0 && r.calls === 0 && r.ledgered) this.retire(id, r);
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

  /** Retire the reserves of keys idle since before `cutoff` (one with a call in flight stays); all of them with no cutoff. */
  sweep(cutoff = Infinity): void {
    for (const [id, r] of this.byId) if (cutoff === Infinity || (r.lastUsed < cutoff && r.calls === 0)) this.retire(id, r);
  }

  private retire(id: string, r: Reserve): void {
    this.byId.delete(id);
    r.units = 0;
    // A call in flight may still reserve under it: the release, sent after, runs after it.
    if (r.ledgered || r.calls > 0) this.release(r);
  }
}
