// The order a job's items are handed out in (src/domain/job-items.ts domainOrder): runs of one domain, the domains
// taking turns, repeats left out, submission order within a domain.
import { describe, expect, it } from 'vitest';
import { distinctItems, domainOrder } from '../../src/domain/job-items.js';

const order = (items: string[], run: number) => [...domainOrder(items, distinctItems(items).firstOf, run)].map((i) => items[i]);

describe('domainOrder', () => {
  it.each([
    ['one domain keeps submission order', ['a@x.t', 'b@x.t', 'c@x.t'], 2, ['a@x.t', 'b@x.t', 'c@x.t']],
    ['runs of `run` addresses, the domains taking turns', ['a@x.t', 'b@y.t', 'c@x.t', 'd@y.t', 'e@x.t'], 2, ['a@x.t', 'c@x.t', 'b@y.t', 'd@y.t', 'e@x.t']],
    ['a domain in any case is one domain', ['a@X.t', 'b@y.t', 'c@x.T'], 20, ['a@X.t', 'c@x.T', 'b@y.t']],
    ['a repeat is left out (it takes its first occurrence\'s line)', ['a@x.t', 'b@y.t', 'a@x.t'], 20, ['a@x.t', 'b@y.t']],
    ['a short domain drops out of the turns', ['a@x.t', 'b@y.t', 'c@y.t', 'd@y.t', 'e@y.t'], 1, ['a@x.t', 'b@y.t', 'c@y.t', 'd@y.t', 'e@y.t']],
  ])('%s', (_name, items, run, expected) => {
    expect(order(items, run)).toEqual(expected);
  });

  it('orders 100,000 items over one big domain and 999 small ones whole, each once', () => {
    const items = Array.from({ length: 100_000 }, (_, i) => (i % 100 === 0 ? `u${i}@d${i % 999}.t` : `u${i}@big.t`));
    const got = domainOrder(items, distinctItems(items).firstOf, 20);
    expect(new Set(got).size).toBe(items.length);
  });
});
