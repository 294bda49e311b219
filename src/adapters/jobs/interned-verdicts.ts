// The jobs' SMTP verdicts kept in the process's verdict cache (verdict-cache.ts) as one shared object per distinct
// verdict: a job's addresses get few distinct verdicts (a reply and its mail server), so a cache of 50,000 of them
// holds references, not 50,000 copies (~7 MB less of the JS heap when full: docs/adr/0038).
import type { Deliverability } from '../../domain/smtp-reply.js';
import type { VerdictCache } from '../smtp/verdict-cache.js';

/** Distinct verdicts remembered; past that the table starts afresh (the entries cached so far keep theirs). */
const MAX_DISTINCT = 4096;

/** `inner`, with each verdict set replaced by the first equal one seen (verdicts are never mutated: they are data). */
export function internedVerdicts(inner: VerdictCache, maxDistinct = MAX_DISTINCT): VerdictCache {
  let seen = new Map<string, Deliverability>();
  const intern = (d: Deliverability): Deliverability => {
    const key = JSON.stringify(d);
    const first = seen.get(key);
    if (first) return first;
    if (seen.size >= maxDistinct) seen = new Map();
    seen.set(key, d);
    return d;
  };
  return {
    get: (domain, users) => inner.get(domain, users),
    set: (domain, verdicts, ttlMs) => inner.set(domain, new Map(Array.from(verdicts, ([user, d]) => [user, intern(d)])), ttlMs),
    size: () => inner.size(),
  };
}
