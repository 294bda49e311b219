// How sessions are labelled for operators, and the listed-verifier signal (RFC 3463 X.7.X refusals across domains).
import { describe, expect, it } from 'vitest';
import { createListingWatch, sessionLabel } from '../../src/domain/smtp-plan-watch.js';
import type { SessionOutcome } from '../../src/domain/smtp-plan.js';

const reply = (code: number, enhancedCode: string | null = null) => ({ code, enhancedCode });

describe('sessionLabel', () => {
  it.each<[SessionOutcome, boolean, string]>([
    [{ kind: 'answered', replies: [reply(250)], tls: false, cut: null }, false, 'answered'],
    [{ kind: 'answered', replies: [reply(550, '5.1.1')], tls: false, cut: null }, false, 'answered'],
    [{ kind: 'answered', replies: [reply(554, '5.7.1'), reply(550, '5.7.1')], tls: false, cut: null }, false, 'blocked'],
    [{ kind: 'answered', replies: [], tls: false, cut: 'timeout' }, false, 'timeout'],
    [{ kind: 'refused', stage: 'greeting', reply: reply(554, '5.7.1'), tls: false }, false, 'blocked'],
    [{ kind: 'refused', stage: 'greeting', reply: reply(421), tls: false }, false, 'deferred'],
    [{ kind: 'unreachable', cause: 'timeout' }, false, 'timeout'],
    [{ kind: 'unreachable', cause: 'refused' }, false, 'unreachable'],
    [{ kind: 'tls_failed' }, false, 'tls_failed'],
    [{ kind: 'answered', replies: [reply(250)], tls: false, cut: null }, true, 'cancelled'],
  ])('%j (cancelled %s) -> %s', (outcome, cancelled, label) => {
    expect(sessionLabel(outcome, cancelled)).toBe(label);
  });
});

describe('createListingWatch', () => {
  const opts = { window: 10, share: 0.5, minDomains: 3 };

  it('one strict domain refusing every session never says listed', () => {
    const w = createListingWatch(opts);
    for (let i = 0; i < 20; i++) expect(w.record('strict.test', 'blocked')).toBeNull();
    expect(w.listed()).toBe(false);
  });

  it('blocked at three domains, half of the window: listed once, then cleared when answers come back', () => {
    const w = createListingWatch(opts);
    const changes = ['a', 'b', 'c', 'd', 'e'].map((d) => w.record(`${d}.test`, 'blocked'));
    expect(changes).toEqual([null, null, 'listed', null, null]);
    const later = Array.from({ length: 10 }, (_, i) => w.record(`ok${i}.test`, 'answered'));
    expect(later.filter(Boolean)).toEqual(['cleared']);
    expect(w.blockedShare()).toBe(0);
  });

  it('timeouts, refused connections and cancels count for nothing', () => {
    const w = createListingWatch(opts);
    for (const label of ['timeout', 'unreachable', 'cancelled', 'tls_failed'] as const) w.record('x.test', label);
    expect(w.blockedShare()).toBe(0);
  });
});
