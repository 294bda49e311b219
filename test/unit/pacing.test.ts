// Pacing of bulk work (src/operations/pacing.ts) and the paced JSON text of a bulk answer (json-chunks.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resultsJson } from '../../src/operations/json-chunks.js';

let pace: typeof import('../../src/operations/pacing.js').pace;
// A fresh module each time: its turn and waiters are the process's, and files that share a worker (make test-fast)
// leave a turn begun on the real clock behind.
beforeEach(async () => {
  vi.resetModules();
  ({ pace } = await import('../../src/operations/pacing.js'));
});
afterEach(() => {
  vi.useRealTimers();
});

/** Settles the pending immediates (the clock does not move: the new turn starts fresh). */
const nextTurn = () => vi.runOnlyPendingTimers();

describe('pace', () => {
  it('lets work go on while the turn is short, then makes every caller wait for a later turn', async () => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'performance'] });
    vi.advanceTimersByTime(10); // a turn that has run long
    const first = pace();
    expect(first).toBeInstanceOf(Promise);
    let resumed = false;
    void first!.then(() => (resumed = true));
    await Promise.resolve();
    expect(resumed).toBe(false);
    nextTurn();
    await first;
    expect(resumed).toBe(true);
    expect(pace()).toBeUndefined(); // the new turn is short: no yield
    vi.advanceTimersByTime(2);
    expect(pace()).toBeInstanceOf(Promise); // past the budget: yield again
    nextTurn();
  });

  it('resumes the waiters one at a time: one whose step makes the turn long leaves the others for the next turn', async () => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'performance'] });
    vi.advanceTimersByTime(1000); // a turn that has run long
    const steps: string[] = [];
    const waiter = (name: string, stepMs: number) =>
      pace()!.then(() => {
        steps.push(name);
        vi.advanceTimersByTime(stepMs); // the waiter's work up to its next yield
      });
    const all = Promise.all([waiter('a', 0.4), waiter('b', 0.8), waiter('c', 0), waiter('d', 0)]);
    nextTurn(); // one immediate for all of them
    for (let i = 0; i < 20; i++) await Promise.resolve(); // every microtask of this turn (vi.waitFor would run the next)
    expect(steps).toEqual(['a', 'b']); // a and b took 1.2 ms of the 1 ms budget
    expect(pace()).toBeInstanceOf(Promise); // a newcomer queues behind c and d
    nextTurn();
    await all;
    expect(steps).toEqual(['a', 'b', 'c', 'd']);
    nextTurn();
  });
});

describe('resultsJson', () => {
  const result = (i: number) => ({ status: 200, result: { email: `u${i}@example.com`, n: i, none: undefined, list: [i, 'é"\\'] } });
  it.each([1, 49, 50, 51, 120])('writes exactly what JSON.stringify writes for %i results', async (n) => {
    const results = Array.from({ length: n }, (_, i) => result(i));
    let text = '';
    for await (const chunk of resultsJson(results)) text += chunk;
    expect(text).toBe(JSON.stringify({ results }));
  });
});
