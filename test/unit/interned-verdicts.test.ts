// The jobs' verdicts in the verdict cache: equal verdicts share one object, different ones stay apart, whatever the
// table's bound (src/adapters/jobs/interned-verdicts.ts).
import { describe, expect, it } from 'vitest';
import { internedVerdicts } from '../../src/adapters/jobs/interned-verdicts.js';
import { createLocalVerdictCache } from '../../src/adapters/smtp/verdict-cache.js';
import type { Deliverability } from '../../src/domain/smtp-reply.js';

const accepted = (mxHost: string): Deliverability => ({ status: 'deliverable', reason: 'accepted', catchAll: false, mxHost, smtpCode: 250, enhancedCode: '2.1.5', tls: true });
const unknownUser = (mxHost: string): Deliverability => ({ status: 'undeliverable', reason: 'mailbox_not_found', catchAll: false, mxHost, smtpCode: 550, enhancedCode: '5.1.1', tls: true });
const hour = () => 3600_000;

describe('internedVerdicts', () => {
  it('keeps one object for equal verdicts, across sets and domains, and each address its own verdict', async () => {
    const inner = createLocalVerdictCache();
    const cache = internedVerdicts(inner);
    cache.set('a.test', new Map([['u1', accepted('mx.test')], ['u2', accepted('mx.test')], ['u3', unknownUser('mx.test')]]), hour);
    cache.set('b.test', new Map([['u1', accepted('mx.test')], ['u2', accepted('mx2.test')]]), hour);
    const a = await inner.get('a.test', ['u1', 'u2', 'u3']);
    const b = await inner.get('b.test', ['u1', 'u2']);
    expect([...a.values(), ...b.values()]).toEqual([accepted('mx.test'), accepted('mx.test'), unknownUser('mx.test'), accepted('mx.test'), accepted('mx2.test')]);
    expect(a.get('u1')).toBe(a.get('u2'));
    expect(b.get('u1')).toBe(a.get('u1'));
    expect(b.get('u2')).not.toBe(a.get('u1'));
    expect(cache.size()).toBe(5);
    expect(await cache.get('a.test', ['u3'])).toEqual(new Map([['u3', unknownUser('mx.test')]]));
  });

  it('starts its table afresh past its bound without changing any verdict', async () => {
    const inner = createLocalVerdictCache();
    const cache = internedVerdicts(inner, 2);
    const hosts = ['mx1.test', 'mx2.test', 'mx3.test', 'mx1.test'];
    hosts.forEach((h, i) => cache.set('a.test', new Map([[`u${i}`, accepted(h)]]), hour));
    const got = await inner.get('a.test', hosts.map((_, i) => `u${i}`));
    expect([...got.values()]).toEqual(hosts.map(accepted));
  });
});
