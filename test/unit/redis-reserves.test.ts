// Reserve bookkeeping without Redis: what each call reports as used, when a reserve is released, and with what.
import { describe, expect, it } from 'vitest';
import type { LimitWindows } from '../../src/adapters/counter-store.js';
import { Reserves, type Reserve } from '../../src/adapters/redis-reserves.js';

const W: LimitWindows = {
  minute: { key: '{k}:m', limit: 100_000 },
  calendar: [{ key: '{k}:d:2026-11-23', limit: 100_000, expiresAt: Date.UTC(2026, 10, 24) }],
};
const ID = 'k';
const T0 = 1_000_000;

/** A grant as CONSUME_LUA answers it: `reserved` units, minute window closing in `pttl` ms. */
const grant = (reserved: number, pttl = 50_000) => ({ reserved, pttl, minuteAfter: reserved + 1, after: [reserved + 1] });

function setup() {
  const released: Array<{ gen: string; used: number }> = [];
  const refills: Reserve[] = [];
  const reserves = new Reserves('inst', (r) => released.push({ gen: r.gen, used: r.used }));
  const use = (now = T0) => reserves.use(ID, now, (r) => refills.push(r));
  /** One call under the reserve, answered with `g` (null: failed), sent at `sentAt`; returns what it reported. */
  const call = (r: Reserve, g: ReturnType<typeof grant> | null, sentAt = T0) => {
    const report = reserves.sent(r);
    reserves.answered(ID, r, g, sentAt);
    return report;
  };
  return { reserves, released, refills, use, call };
}

describe('Reserves', () => {
  it('each call reports the running total of units used (a repeated or crossed report changes nothing)', () => {
    const { reserves, use, call } = setup();
    const r = reserves.open(ID, W, T0);
    call(r, grant(10));
    for (let i = 0; i < 4; i++) expect(use()).not.toBeNull();
    const first = reserves.sent(r);
    use(); // used while the call is out
    expect([first, call(r, null), reserves.sent(r)]).toEqual([4, 5, 5]);
  });

  it('a failed call may have left a ledger entry: even a reserve that never got units is released when retired', () => {
    const { reserves, released, call } = setup();
    const r = reserves.open(ID, W, T0);
    call(r, null);
    reserves.sweep();
    expect(released).toEqual([{ gen: r.gen, used: 0 }]);
  });

  it('is released with its total use when its minute window closes', () => {
    const { reserves, released, use, call } = setup();
    const r = reserves.open(ID, W, T0);
    call(r, grant(10, 1000));
    use(T0);
    use(T0 + 10);
    expect(use(T0 + 960)).toBeNull(); // within 50 ms of the window's end
    expect(released).toEqual([{ gen: r.gen, used: 2 }]);
    expect(reserves.open(ID, W, T0 + 960).gen).not.toBe(r.gen);
  });

  it('places the window end from when the call went out, not when its answer came (a late answer never extends it)', () => {
    const { reserves, released, use } = setup();
    const r = reserves.open(ID, W, T0);
    reserves.sent(r);
    reserves.answered(ID, r, grant(10, 1000), T0); // answered 400 ms later: the window still ends at T0 + 1000
    expect(use(T0 + 400)).not.toBeNull();
    expect(use(T0 + 960)).toBeNull();
    expect(released).toHaveLength(1);
  });

  it.each([
    { given: 'a ledger entry (it reserved before)', first: grant(10, 1000), want: 'retired' },
    { given: 'no ledger entry (nothing reserved yet)', first: grant(0, 1000), want: 'kept' },
  ])('a grant in a new minute window: a reserve with $given is $want', ({ first, want }) => {
    const { reserves, released, call } = setup();
    const r = reserves.open(ID, W, T0);
    call(r, first);
    call(r, grant(5, 60_000), T0 + 2000);
    expect(released.length).toBe(want === 'retired' ? 1 : 0);
    expect(reserves.unitsOf(ID)).toBe(want === 'retired' ? 0 : 5);
  });

  it('a reserve retired with a call out is released (the call may reserve under it); the late answer adds nothing', () => {
    const { reserves, released } = setup();
    const r = reserves.open(ID, W, T0);
    reserves.sent(r);
    reserves.sweep(); // close(): everything goes, calls out or not
    expect(released).toEqual([{ gen: r.gen, used: 0 }]);
    reserves.answered(ID, r, grant(10), T0);
    expect(reserves.unitsOf(ID)).toBe(0);
  });

  it('an idle sweep keeps a reserve with a call out, and releases it once idle and answered', () => {
    const { reserves, released } = setup();
    const r = reserves.open(ID, W, T0);
    reserves.sent(r);
    reserves.sweep(T0 + 5000);
    expect(released).toEqual([]);
    reserves.answered(ID, r, grant(10), T0);
    reserves.sweep(T0 + 5000);
    expect(released).toEqual([{ gen: r.gen, used: 0 }]);
  });

  it('asks for a top-up once, when half of the last grant is used', () => {
    const { reserves, refills, use, call } = setup();
    const r = reserves.open(ID, W, T0);
    call(r, grant(10));
    for (let i = 0; i < 7; i++) use();
    expect(refills).toEqual([r]);
  });

  it.each([
    { topUp: grant(0), want: 'retired, its use reported' },
    { topUp: grant(8), want: 'kept' },
  ])('used up while its top-up was out: $want', ({ topUp, want }) => {
    const { reserves, released, use, call } = setup();
    const r = reserves.open(ID, W, T0);
    call(r, grant(4));
    for (let i = 0; i < 4; i++) use();
    call(r, topUp);
    reserves.retireIfSpent(ID, r);
    expect(released).toEqual(want === 'kept' ? [] : [{ gen: r.gen, used: 4 }]);
  });
});
