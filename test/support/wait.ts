// Waiting for a state instead of for a fixed time: poll a predicate until it holds or a deadline passes.

/**
 * The deadline when a caller names none: a hang guard sized for a starved machine (2 cores at load average 10, where
 * a child process takes tens of seconds to start), never an expectation of how fast the state comes.
 */
export const DEFAULT_DEADLINE_MS = 30_000;

export interface WaitOptions {
  /** Give up after this long (a deadline, not an expected duration: the wait ends as soon as the state holds). */
  timeoutMs?: number;
  /** Between two looks. */
  intervalMs?: number;
  /** Named in the error when the deadline passes. */
  what?: string;
  /** Looked at before each try: a reason (a string) ends the wait at once, e.g. the process waited for has exited. */
  giveUp?: () => string | false | null | undefined;
}

/**
 * Resolves with the predicate's first truthy value; rejects once `timeoutMs` has passed without one. The
 * predicate may be async; an exception it throws counts as "not yet" until the deadline, then is reported.
 */
export async function waitFor<T>(predicate: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = DEFAULT_DEADLINE_MS, intervalMs = 10, what = 'the awaited state', giveUp } = opts;
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    const reason = giveUp?.();
    if (reason) throw new Error(`${what} will not come: ${reason}`);
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
      last = null;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      throw new Error(`${what} did not come within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
