// Calendar windows for quotas: the UTC day and the UTC month containing an instant (ISO 8601 dates, UTC).

export interface UtcWindow {
  /** Stable name of the window, part of its counter key: `d:2026-11-22` or `m:2026-11`. */
  id: string;
  /** First millisecond of the window (epoch ms). */
  startsAt: number;
  /** First millisecond after the window (epoch ms): the reset time. */
  endsAt: number;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** The UTC calendar day containing nowMs. */
export function utcDay(nowMs: number): UtcWindow {
  const d = new Date(nowMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.getUTCDate();
  return { id: `d:${y}-${pad(m + 1)}-${pad(day)}`, startsAt: Date.UTC(y, m, day), endsAt: Date.UTC(y, m, day + 1) };
}

/** The UTC calendar month containing nowMs. */
export function utcMonth(nowMs: number): UtcWindow {
  const d = new Date(nowMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return { id: `m:${y}-${pad(m + 1)}`, startsAt: Date.UTC(y, m, 1), endsAt: Date.UTC(y, m + 1, 1) };
}

/** Whole seconds from nowMs until endMs, rounded up; never below `min`. */
export function secondsUntil(endMs: number, nowMs: number, min = 0): number {
  return Math.max(min, Math.ceil((endMs - nowMs) / 1000));
}
