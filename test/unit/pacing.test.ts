// Pacing of bulk work (src/operations/pacing.ts) and the paced JSON text of a bulk answer (json-chunks.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resultsJson } from '../../src/operations/json-chunks.js';
import { pace } from '../../src/operations/pacing.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Settles the pending immediates (the clock does not move: the new turn starts fresh). */
const nextTurn = () => vi.runOnlyPendingTimers();

describe('pace', () => {
  it('lets work go on while the turn is short, then makes every caller wait for one later turn', async () => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'performance'] });
    vi.advanceTimersByTime(10); // a turn that has run long
    const first = pace();
    expect(first).toBeInstanceOf(Promise);
    expect(pace()).toBe(first); // one immediate for all, not one each
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
