// API key authentication (X-Api-Key): SHA-256 lookup on demand, bounded caches, evicted by the store's change feed (docs/keys.md).
import { LRUCache } from 'lru-cache';
import type { KeyRecord, KeyStore } from '../adapters/keys/key-store.js';
import { hashKey } from '../adapters/keys/key-store.js';
import { ApiError, serviceUnavailable } from '../errors.js';

export interface KeyDirectoryOptions {
  store: KeyStore;
  /** How often the change feed is polled; a change reaches this process within about this interval. */
  refreshMs?: number;
  /** Keys the store holds (any status), by hash: the most recently used ones. Default 50,000. */
  maxKnown?: number;
  /** Hashes the store does not hold: the most recently presented ones. Default 10,000. */
  maxUnknown?: number;
  onError?: (err: unknown) => void;
}

/** Longer than any key this service issues (36 characters): refused without hashing or a lookup. */
const MAX_KEY_LENGTH = 256;
/** Feed reads per poll while the store reports more (Redis answers in batches). */
const MAX_FEED_READS = 10;

interface Lookup {
  promise: Promise<KeyRecord | null>;
  /** Set when the feed names the key (or resets) while the lookup is in flight: its answer may predate the change. */
  stale: boolean;
}

/**
 * The refusals, rejected once and handled once at load: a promise rejected per request costs Node's rejection
 * bookkeeping (more than the rest of a cached answer, docs/adr/0012), so an unknown key's 403 would cost more
 * than a known key's answer. The errors are shared and must not be modified (ApiError's fields are read-only).
 */
function refusedOnce(err: ApiError): Promise<never> {
  const settled = Promise.reject(err);
  settled.catch(() => undefined);
  return settled;
}
const REFUSED = {
  missing: refusedOnce(new ApiError(401, 'UNAUTHORIZED', 'the X-Api-Key header is missing')),
  forbidden: refusedOnce(new ApiError(403, 'FORBIDDEN', 'the API key is invalid, inactive or revoked')),
};

/**
 * Keys are found by their SHA-256 hash, never by the presented string: an indexed lookup in the store on a
 * cache miss, whose timing tells nothing about any key. Both answers are cached, each in its own bounded
 * LRU, so unknown keys (any number of them) can neither grow memory nor push known keys out. The change
 * feed evicts exactly the keys that changed, so a revocation, a deactivation or a new key (cached as
 * unknown a moment ago) takes effect within one poll. When the store is unreachable the cached keys
 * keep serving; a key not cached answers 503.
 */
export class KeyDirectory {
  private readonly known: LRUCache<string, KeyRecord>;
  private readonly unknown: LRUCache<string, true>;
  /**
   * Presented key -> its hash, so a repeat caller skips the SHA-256. A pure memo
   * (a key's hash never changes, so no change can make it wrong), bounded; keys the store holds and keys it does
   * not are memoised apart, so a flood of unknown keys cannot push the known ones out.
   */
  private readonly recent: LRUCache<string, string>;
  private readonly recentUnknown: LRUCache<string, string>;
  private readonly pending = new Map<string, Lookup>();
  private cursor: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private counts = { hits: 0, misses: 0 };
  /** True once the change feed has been read: from then on every change is seen. */
  loaded = false;
  /** False while the store does not answer (the last feed read or lookup failed). */
  healthy = true;

  constructor(private readonly opts: KeyDirectoryOptions) {
    this.known = new LRUCache({ max: opts.maxKnown ?? 50_000 });
    this.unknown = new LRUCache({ max: opts.maxUnknown ?? 10_000 });
    this.recent = new LRUCache({ max: opts.maxKnown ?? 50_000 });
    this.recentUnknown = new LRUCache({ max: opts.maxUnknown ?? 10_000 });
  }

  /** Read the change feed now (the timer does it every refreshMs). */
  async refresh(): Promise<void> {
    this.refreshing ??= this.poll().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async poll(): Promise<void> {
    try {
      for (let reads = 0; reads < MAX_FEED_READS; reads++) {
        const changes = await this.opts.store.changes(this.cursor);
        if (changes.reset) this.forgetAll();
        else for (const hash of changes.hashes) this.forget(hash);
        const moved = changes.cursor !== this.cursor;
        this.cursor = changes.cursor;
        if (!moved || changes.reset) break;
      }
      this.loaded = true;
      this.healthy = true;
    } catch (err) {
      this.healthy = false;
      this.opts.onError?.(err);
    }
  }

  private forget(hash: string): void {
    this.known.delete(hash);
    this.unknown.delete(hash);
    const inFlight = this.pending.get(hash);
    if (inFlight) {
      inFlight.stale = true;
      this.pending.delete(hash);
    }
  }

  private forgetAll(): void {
    this.known.clear();
    this.unknown.clear();
    for (const inFlight of this.pending.values()) inFlight.stale = true;
    this.pending.clear();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), this.opts.refreshMs ?? 250);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Cache counters for /metrics: answers without a store lookup of their own, store lookups, entries held. */
  stats(): { hits: number; misses: number; size: number } {
    return { ...this.counts, size: this.known.size + this.unknown.size };
  }

  /**
   * The key's record; rejects with ApiError 401 when no key was sent, 403 when it is unknown, inactive or revoked.
   * Answers from the caches are settled promises (the refusals shared, see REFUSED): no store work, no waiting.
   */
  authenticate(header: string | string[] | undefined): Promise<KeyRecord> {
    const presented = Array.isArray(header) ? header[0] : header;
    if (presented === undefined || presented === '') return REFUSED.missing;
    if (presented.length > MAX_KEY_LENGTH) return REFUSED.forbidden;
    const memo = this.recent.get(presented) ?? this.recentUnknown.get(presented);
    const hash = memo ?? hashKey(presented);
    const record = this.known.get(hash);
    if (record !== undefined) {
      this.counts.hits++;
      if (!this.recent.has(presented)) this.recent.set(presented, hash);
      return record.status === 'active' ? Promise.resolve(record) : REFUSED.forbidden;
    }
    if (this.unknown.get(hash) !== undefined) {
      this.counts.hits++;
      if (memo === undefined) this.recentUnknown.set(presented, hash);
      return REFUSED.forbidden;
    }
    return this.lookup(hash).then((found) => {
      if (found === null) {
        this.recentUnknown.set(presented, hash);
        return REFUSED.forbidden;
      }
      this.recent.set(presented, hash);
      return found.status === 'active' ? found : REFUSED.forbidden;
    });
  }

  /** One store lookup per hash at a time; its answer is cached unless the feed named the key meanwhile. */
  private lookup(hash: string): Promise<KeyRecord | null> {
    const inFlight = this.pending.get(hash);
    if (inFlight) {
      this.counts.hits++; // answered by another request's lookup
      return inFlight.promise;
    }
    this.counts.misses++;
    const entry: Lookup = { promise: Promise.resolve(null), stale: false };
    const settle = () => {
      if (this.pending.get(hash) === entry) this.pending.delete(hash);
    };
    entry.promise = this.opts.store.findByHash(hash).then(
      (record) => {
        settle();
        if (!entry.stale) {
          if (record) this.known.set(hash, record);
          else this.unknown.set(hash, true);
        }
        return record;
      },
      (err: unknown) => {
        settle();
        if (this.healthy) this.opts.onError?.(err);
        this.healthy = false;
        throw serviceUnavailable('the key store cannot be reached: try again shortly');
      },
    );
    this.pending.set(hash, entry);
    return entry.promise;
  }
}
