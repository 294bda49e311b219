// Usage counters port for rate limits and quotas: a fixed per-minute window plus calendar (UTC day/month) counters.

/** Length of the per-minute window: a fixed window opened by the first request counted in it. */
export const MINUTE_MS = 60_000;

/** One calendar counter: its key (unique per window, e.g. `{key_ab12}:d:2026-11-22`), limit and end. */
export interface CalendarCounter {
  readonly key: string;
  readonly limit: number;
  /** End of the window (epoch ms); the store may forget the counter after it. */
  readonly expiresAt: number;
}

/** What a store is asked to count; never changed once made (stores may key their own state on the object). */
export interface LimitWindows {
  /** The per-minute window of one API key. */
  readonly minute: { readonly key: string; readonly limit: number };
  /** Calendar counters, checked after the minute window, in order (day, month). */
  readonly calendar: readonly CalendarCounter[];
}

/** Index of the last calendar counter at its limit, -1 when none is. */
export function lastFull(calendar: readonly CalendarCounter[], counts: readonly number[]): number {
  for (let k = calendar.length - 1; k >= 0; k--) if (counts[k] >= calendar[k].limit) return k;
  return -1;
}

export interface MinuteState {
  used: number;
  /** ms until the window closes; MINUTE_MS when none is open (the next request opens a full one). */
  resetMs: number;
}

export interface TakeResult {
  /**
   * -1: counted in every window; 0: refused by the minute window; i ≥ 1: refused by calendar[i - 1]. When
   * several windows are at their limit, the one that ends last (the one a client has to wait for).
   */
  refused: number;
  minute: MinuteState;
  /** Calendar counters' values after the call. */
  counts: number[];
  /**
   * Set on a refusal that only units other instances hold reserved cause (shared stores): those come back
   * within this many ms when unused, so the refusal is temporary, not the window's end.
   */
  retryMs?: number;
}

export interface UsageCounts {
  minute: MinuteState;
  counts: number[];
}

export interface CounterStore {
  /**
   * Count one request in every window unless one of them is at its limit; then count nothing at all
   * (a refused request consumes no window, the refusing one included). Never rejects: a store that cannot
   * reach its backend counts locally and reports `healthy() === false`.
   */
  take(windows: LimitWindows): Promise<TakeResult>;
  /** Current values, counting nothing. */
  read(minuteKey: string, calendarKeys: readonly string[]): Promise<UsageCounts>;
  /** False while the backing store is unreachable and counting is degraded to this process. */
  healthy(): boolean;
  /** Shared stores: requests this process has counted alone since start, because the store did not answer. */
  countedAlone?(): number;
  close(): Promise<void>;
}
