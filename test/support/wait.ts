// Waiting for a state instead of for a fixed time: poll a predicate until it holds or a deadline passes.

export interface WaitOptions {
  /** Give up after this long (a deadline, not an expected duration: the wait ends as soon as the state holds). */
  timeoutMs?: number;
  /** Between two looks. */
  intervalMs?: number;
  /** Named in the error when the deadline passes. */
  what?: string;
}

/**
 * Resolves with the predicate's first truthy value; rejects once `timeoutMs` has passed without one. The
 * predicate may be async; an exception it throws counts as "not yet" until the deadline, then is reported.
 */
export async function waitFor<T>(predicate: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = 5000, intervalMs = 10, what = 'the awaited state' } = opts;
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
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

