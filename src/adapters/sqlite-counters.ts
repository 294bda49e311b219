// Embedded usage counters: day/month quotas in SQLite (batched additive writes), per-minute window in memory (rate-limiter-flexible).
//
// The request path never touches the disk: authoritative counts live in a Map, increments collect in a
// pending Map and are written every `flushMs` (default 250 ms) and on close, in one transaction, as
// additive upserts (`count = count + ?`), so several processes sharing the file never overwrite each
// other. Every `rereadMs` (default 1 s) the flush also re-reads the totals, so increments made by other
// processes on the same file become visible. On start the current totals are loaded: a restart never
// hands out a fresh quota.
//
// Loss window: a crash (SIGKILL, power loss) loses at most the increments of the last `flushMs`
// (requests answered but not yet written); a graceful close() flushes them. With WAL and
// synchronous=NORMAL a power failure may also lose the last commits before a checkpoint.
// The per-minute window is per process and starts afresh after a restart.
import type Database from 'better-sqlite3';
import type { CounterStore } from './counter-store.js';
import { LocalCounters, createMinuteLimiter, readLocally, takeLocally, type PendingIncrement } from './local-counters.js';

export interface SqliteCountersOptions {
  /** The service database from `openDatabase(dataDir)`; not closed by close() (the key store owns it). */
  db: Database.Database;
  /** Clock for pruning ended windows; default Date.now. */
  now?: () => number;
  /** How often pending increments are written; default 250 ms. */
  flushMs?: number;
  /** How often totals are re-read from the file (other processes' increments); default 1000 ms. */
  rereadMs?: number;
  logger?: { warn: (obj: object, msg?: string) => void };
}

export interface SqliteCounterStore extends CounterStore {
  /** Write pending increments now (and re-read the totals when `reread` or when due); the timer calls it. */
  flush(reread?: boolean): void;
}

export function createSqliteCounters(opts: SqliteCountersOptions): SqliteCounterStore {
  const { db } = opts;
  const now = opts.now ?? Date.now;
  const flushMs = opts.flushMs ?? 250;
  const rereadMs = opts.rereadMs ?? 1000;

  db.exec(`
    CREATE TABLE IF NOT EXISTS usage_counters (
      counter_key TEXT PRIMARY KEY,
      count INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
  `);
  const upsert = db.prepare(
    `INSERT INTO usage_counters (counter_key, count, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (counter_key) DO UPDATE SET count = count + excluded.count, expires_at = max(expires_at, excluded.expires_at)`,
  );
  const selectLive = db.prepare('SELECT counter_key, count, expires_at FROM usage_counters WHERE expires_at > ?');
  const prune = db.prepare('DELETE FROM usage_counters WHERE expires_at <= ?');
  const writeBatch = db.transaction((batch: PendingIncrement[]) => {
    for (const p of batch) upsert.run(p.key, p.n, p.expiresAt);
  });

  const local = new LocalCounters();
  const minute = createMinuteLimiter();
  let ok = true;
  let closed = false;
  let lastReread = 0;

  const reread = (): void => {
    const t = now();
    prune.run(t);
    const totals = new Map<string, { count: number; expiresAt: number }>();
    for (const row of selectLive.iterate(t) as Iterable<{ counter_key: string; count: number; expires_at: number }>) {
      totals.set(row.counter_key, { count: row.count, expiresAt: row.expires_at });
    }
    local.replaceTotals(totals);
    lastReread = t;
  };

  function flush(forceReread = false): void {
    const batch = local.drain();
    if (batch.length > 0) {
      try {
        writeBatch(batch);
      } catch (err) {
        // Kept for the next attempt (e.g. SQLITE_BUSY from another process).
        local.restore(batch);
        ok = false;
        opts.logger?.warn({ err: String(err) }, 'usage counters not written; will retry');
        return;
      }
    }
    try {
      if (forceReread || now() - lastReread >= rereadMs) reread();
      ok = true;
    } catch (err) {
      ok = false;
      opts.logger?.warn({ err: String(err) }, 'usage counters not re-read');
    }
  }

  reread();
  const timer = setInterval(() => flush(), flushMs);
  timer.unref();

  return {
    take: (w) => takeLocally(minute, local, w),
    read: (minuteKey, keys) => readLocally(minute, local, minuteKey, keys),
    healthy: () => ok,
    flush,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      if (db.open) flush();
    },
  };
}
