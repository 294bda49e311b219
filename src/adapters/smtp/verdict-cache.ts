// The SMTP verifier's verdict cache: the verdicts of local parts at a domain, each kept for the time its kind is
// trusted (mailbox-verifier.ts). In process (an LRU) here; shared by every process through Redis in
// redis-verdict-cache.ts, with this one in front.
import { LRUCache } from 'lru-cache';
import type { Deliverability } from '../../domain/smtp-reply.js';

export interface VerdictCache {
  /** The verdicts still kept for `users` at `domain` (the others absent). */
  get(domain: string, users: readonly string[]): Promise<Map<string, Deliverability>>;
  /** Keep each verdict for `ttlMs(verdict)`. */
  set(domain: string, verdicts: ReadonlyMap<string, Deliverability>, ttlMs: (d: Deliverability) => number): void;
  /** Entries held in this process (the cache gauge). */
  size(): number;
}

export interface LocalVerdictCache extends VerdictCache {
  /** Keep one verdict for `ttlMs` (what another process found, for as long as it has left). */
  keep(domain: string, user: string, d: Deliverability, ttlMs: number): void;
}

export interface LocalVerdictCacheOptions {
  max?: number;
  /** The clock of the lifetimes (tests); default performance. */
  clock?: { now(): number };
}

const keyOf = (domain: string, user: string): string => `${user}@${domain}`;

export function createLocalVerdictCache(o: LocalVerdictCacheOptions = {}): LocalVerdictCache {
  // Each entry gets its own lifetime when set; the default only turns lifetimes on.
  const lru = new LRUCache<string, Deliverability>({ max: o.max ?? 50_000, ttl: 3600_000, perf: o.clock });
  const keep = (domain: string, user: string, d: Deliverability, ttlMs: number): void => void lru.set(keyOf(domain, user), d, { ttl: ttlMs });
  return {
    async get(domain, users) {
      const found = new Map<string, Deliverability>();
      for (const u of users) {
        const d = lru.get(keyOf(domain, u));
        if (d) found.set(u, d);
      }
      return found;
    },
    set(domain, verdicts, ttlMs) {
      for (const [u, d] of verdicts) keep(domain, u, d, ttlMs(d));
    },
    size: () => lru.size,
    keep,
  };
}
