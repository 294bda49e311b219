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
  const released: Array<{ gen: string; unreported: number }> = [];
  const refills: Reserve[] = [];
  const reserves = new Reserves('inst', (r) => released.push({ gen: r.gen, unreported: r.unreported }));
  const use = (now = T0) => reserves.use(ID, now, (r) => refills.push(r));
  return { reserves, released, refills, use };
}

describe('Reserves', () => {
  it('each call reports the units used since the last answered report, once', () => {
    const { reserves, use } = setup();
    const r = reserves.open(ID, W, T0);
    reserves.answered(ID, r, reserves.sent(r), grant(10), T0);
    for (let i = 0; i < 4; i++) expect(use()).not.toBeNull();
    const first = reserves.sent(r);
    use(); // used while the call is out: the next call reports it
    const second = reserves.sent(r);
    expect([first, second]).toEqual([4, 1]);
    reserves.answered(ID, r, first, grant(0), T0);
    reserves.answered(ID, r, second, grant(0), T0);
    expect([r.unreported, r.reporting, reserves.sent(r)]).toEqual([0, 0, 0]);
  });

  it('a failed call reports again with the next one, and its reserve is released even if it never reserved', () => {
    const { reserves, released, use } = setup();
    const r = reserves.open(ID, W, T0);
    reserves.answered(ID, r, reserves.sent(r), grant(10), T0);
    use();
    use();
    reserves.answered(ID, r, reserves.sent(r), null, T0);
    expect(reserves.sent(r)).toBe(2);
    const fresh = setup();
    const f = fresh.reserves.open(ID, W, T0);
    fresh.reserves.answered(ID, f, fresh.reserves.sent(f), null, T0); // may have run: the ledger may hold an entry
    fresh.reserves.sweep();
    expect(fresh.released).toEqual([{ gen: f.gen, unreported: 0 }]);
    expect(released).toEqual([]);
  });

  it('is released with its unreported use when its minute window closes', () => {
    const { reserves, released, use } = setup();
    const r = reserves.open(ID, W, T0);
    reserves.answered(ID, r, reserves.sent(r), grant(10, 1000), T0);
    use(T0);
    use(T0 + 10);
    expect(use(T0 + 960)).toBeNull(); // within 50 ms of the window's end
    expect(released).toEqual([{ gen: r.gen, unreported: 2 }]);
    expect(reserves.open(ID, W, T0 + 960).gen).not.toBe(r.gen);
  });

  it.each([
    { given: 'a ledger entry (it reserved before)', first: grant(10, 1000), want: 'retired' },
    { given: 'no ledger entry (nothing reserved yet)', first: grant(0, 1000), want: 'kept' },
  ])('a grant in a new minute window: a reserve with $given is $want', ({ first, want }) => {
    const { reserves, released } = setup();
    const r = reserves.open(ID, W, T0);
    reserves.answered(ID, r, reserves.sent(r), first, T0);
    reserves.answered(ID, r, reserves.sent(r), grant(5, 60_000), T0 + 2000);
    expect(released.length).toBe(want === 'retired' ? 1 : 0);
    expect(reserves.unitsOf(ID)).toBe(want === 'retired' ? 0 : 5);
  });

  it('a reserve retired with a call out is released (the call may reserve under it); the late answer adds nothing', () => {
    const { reserves, released } = setup();
    const r = reserves.open(ID, W, T0);
    const report = reserves.sent(r);
    reserves.sweep(); // close(): everything goes, calls out or not
    expect(released).toEqual([{ gen: r.gen, unreported: 0 }]);
    reserves.answered(ID, r, report, grant(10), T0);
    expect(reserves.unitsOf(ID)).toBe(0);
  });

  it('an idle sweep keeps a reserve with a call out, and releases it once idle and answered', () => {
    const { reserves, released } = setup();
    const r = reserves.open(ID, W, T0);
    const report = reserves.sent(r);
    reserves.sweep(T0 + 5000);
    expect(released).toEqual([]);
    reserves.answered(ID, r, report, grant(10), T0);
    reserves.sweep(T0 + 5000);
    expect(released).toEqual([{ gen: r.gen, unreported: 0 }]);
  });

  it('asks for a top-up once, when half of the last grant is used', () => {
    const { reserves, refills, use } = setup();
    const r = reserves.open(ID, W, T0);
    reserves.answered(ID, r, reserves.sent(r), grant(10), T0);
    for (let i = 0; i < 7; i++) use();
    expect(refills).toEqual([r]);
  });
});
