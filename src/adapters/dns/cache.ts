// Bounded LRU cache of DNS answers, each kept for its TTL (RFC 1035 §7.4, negative answers per RFC 2308).
import { LRUCache } from 'lru-cache';
import type { DnsAnswer } from './wire.js';

interface Entry {
  answer: DnsAnswer;
  storedAt: number;
  expiresAt: number;
  /** The answer as aged by `agedBy` whole seconds: built once per second, not once per lookup. */
  agedBy: number;
  aged: DnsAnswer;
}

/** Longest time any answer is kept, in seconds (one day), whatever its TTL. */
const MAX_CACHE_TTL = 86_400;
/** Longest time a negative answer (NXDOMAIN/NODATA) is kept, in seconds. */
const MAX_NEGATIVE_TTL = 900;
/** Negative-answer lifetime, in seconds, when the answer carries no SOA. */
const DEFAULT_NEGATIVE_TTL = 30;

export class DnsAnswerCache {
  private readonly lru: LRUCache<string, Entry> | null;

  /** `entries` ≤ 0 disables caching. `now` returns milliseconds on a monotonic clock. */
  constructor(
    entries: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lru = entries > 0 ? new LRUCache<string, Entry>({ max: entries }) : null;
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  /** The cached answer with each record's TTL reduced by the whole seconds it has been held; undefined when absent or expired. */
  get(key: string): DnsAnswer | undefined {
    const e = this.lru?.get(key);
    if (!e) return undefined;
    const t = this.now();
    if (t >= e.expiresAt) {
      this.lru?.delete(key);
      return undefined;
    }
    const aged = Math.floor((t - e.storedAt) / 1000);
    if (aged !== e.agedBy) {
      e.agedBy = aged;
      e.aged = { ...e.answer, records: e.answer.records.map((r) => ({ ...r, ttl: Math.max(0, r.ttl - aged) })) };
    }
    return e.aged;
  }

  /** Milliseconds until the cached answer expires; undefined when it is not cached. */
  remainingMs(key: string): number | undefined {
    const e = this.lru?.peek(key);
    if (!e) return undefined;
    const left = e.expiresAt - this.now();
    return left > 0 ? left : undefined;
  }

  /**
   * Keep an answer. Positive answers live for `ttlSeconds` (the answer's minimum TTL), capped at MAX_CACHE_TTL;
   * negative ones for the SOA-derived TTL capped at MAX_NEGATIVE_TTL, or DEFAULT_NEGATIVE_TTL without a SOA.
   * A TTL of 0 is not cached.
   */
  set(key: string, answer: DnsAnswer, ttlSeconds: number | undefined): void {
    if (!this.lru) return;
    const negative = answer.records.length === 0;
    const ttl = negative
      ? Math.min(ttlSeconds ?? DEFAULT_NEGATIVE_TTL, MAX_NEGATIVE_TTL)
      : Math.min(ttlSeconds ?? 0, MAX_CACHE_TTL);
    if (!(ttl > 0)) return;
    const t = this.now();
    this.lru.set(key, { answer, storedAt: t, expiresAt: t + ttl * 1000, agedBy: 0, aged: answer });
  }
}
