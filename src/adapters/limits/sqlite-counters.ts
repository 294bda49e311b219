// Embedded usage counters: rate-limiter-flexible RateLimiterMemory, calendar counts persisted to SQLite (docs/adr/0013).
//
// The request path never touches the disk: counts live in memory; every `flushMs` (default 250 ms) and on close
// the calendar counters changed since are written in one transaction (their absolute values), off the request
// path. On start the live counters are loaded: a restart never hands out a fresh daily or monthly quota.
// One process counts per DATA_DIR: WORKERS=N counts in the primary (src/adapters/limits/cluster-counters.ts).
//
// Loss window: a crash (SIGKILL, power loss) loses at most the counts of the last `flushMs`; a graceful
// close() writes them. The per-minute window is per process and starts afresh after a restart.
import type Database from 'better-sqlite3';
import type { CounterStore } from './counter-store.js';
import { CalendarLimiter, createMinuteLimiter, type CalendarRow } from './local-counters.js';

export interface PersistOptions {
  /** The service database from `openDatabase(dataDir)`; not closed here (the key store owns it). */
  db: Database.Database;
  /** How often changed counters are written; default 250 ms. */
  flushMs?: number;
  logger?: { warn: (obj: object, msg?: string) => void };
}

export interface PersistedCalendar {
  /** Write the counters changed since the last write; the timer calls it. */
  flush(): Promise<void>;
  /** Whether the last write succeeded. */
  healthy(): boolean;
  /** Stop the timer and write what is left. */
  close(): Promise<void>;
}

const PRUNE_MS = 60_000;

/** Load `calendar` from the usage_counters table and keep writing its changes there. */
export function persistCalendar(calendar: CalendarLimiter, opts: PersistOptions): PersistedCalendar {
  const { db } = opts;
  db.exec(`
    CREATE TABLE IF NOT EXISTS usage_counters (
      counter_key TEXT PRIMARY KEY,
      count INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
  `);
  const upsert = db.prepare(
    `INSERT INTO usage_counters (counter_key, count, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (counter_key) DO UPDATE SET count = excluded.count, expires_at = excluded.expires_at`,
  );
  const prune = db.prepare('DELETE FROM usage_counters WHERE expires_at <= ?');
  const writeRows = db.transaction((rows: CalendarRow[]) => {
    for (const r of rows) upsert.run(r.key, r.count, r.expiresAt);
  });
  const now = Date.now();
  prune.run(now);
  const rows = db.prepare('SELECT counter_key AS key, count, expires_at AS expiresAt FROM usage_counters WHERE expires_at > ?').all(now);
  calendar.load(rows as CalendarRow[], now);

  let ok = true;
  let lastPrune = now;
  let writing: Promise<void> = Promise.resolve();
  const write = async (): Promise<void> => {
    const changed = await calendar.takeChanged();
    if (!db.open) return;
    try {
      if (changed.length > 0) writeRows(changed);
      const t = Date.now();
      if (t - lastPrune >= PRUNE_MS) {
        calendar.prune(t);
        prune.run(t);
        lastPrune = t;
      }
      ok = true;
    } catch (err) {
      // Kept for the next attempt (e.g. SQLITE_BUSY while another process writes).
      calendar.markChanged(changed.map((r) => r.key));
      if (ok) opts.logger?.warn({ err: String(err) }, 'usage counters not written; will retry');
      ok = false;
    }
  };
  const flush = (): Promise<void> => (writing = writing.then(write));
  const timer = setInterval(() => void flush(), opts.flushMs ?? 250);
  timer.unref();
  return {
    flush,
    healthy: () => ok,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

export interface SqliteCounterStore extends CounterStore {
  /** Write the changed calendar counters now. */
  flush(): Promise<void>;
}

/** The embedded store of one serving process. */
export function createSqliteCounters(opts: PersistOptions): SqliteCounterStore {
  const calendar = new CalendarLimiter();
  const persisted = persistCalendar(calendar, opts);
  let closed = false;
  return {
    minute: createMinuteLimiter(),
    calendar,
    healthy: persisted.healthy,
    flush: persisted.flush,
    async close() {
      if (closed) return;
      closed = true;
      await persisted.close();
    },
  };
}
