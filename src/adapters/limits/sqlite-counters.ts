// Embedded usage counters: rate-limiter-flexible RateLimiterMemory, calendar counts persisted to SQLite (docs/adr/0013, 0019).
//
// The request path never touches the disk: counts live in memory; every `flushMs` (default 250 ms) and on close
// the calendar counters changed since are written (their absolute values, so a write repeated after a failure
// counts nothing twice), off the request path. On start the live counters are loaded: a restart never hands out a
// fresh daily or monthly quota. One process counts per DATA_DIR: WORKERS=N counts in the primary
// (src/adapters/limits/cluster-counters.ts).
//
// The writes run on the event loop and never wait for a lock (docs/adr/0019): with busy_timeout 0 a write that
// finds another process holding the lock fails at once, its counters stay marked as changed, and it is tried again
// later with back-off. Long failures are told (write-health.ts): one warning, /readyz degraded, a gauge.
//
// Loss window: a crash (SIGKILL, power loss) loses the counts not yet written: those of the last `flushMs`, or of
// as long as another process has held the lock; a graceful close() writes them (waiting up to closeTimeoutMs).
import type Database from 'better-sqlite3';
import { isBusy, neverWait } from '../sqlite/database.js';
import type { CounterStore } from './counter-store.js';
import { CalendarLimiter, createMinuteLimiter, type CalendarRow } from './local-counters.js';
import { trackWrites, type WriteLogger, type WriteStatus } from './write-health.js';

export interface PersistOptions {
  /** The service database from `openDatabase(dataDir)`; not closed here (the key store owns it). */
  db: Database.Database;
  /** How often changed counters are written; default 250 ms. */
  flushMs?: number;
  /** While writes fail, the wait between attempts doubles from flushMs up to this; default 1000 ms. */
  maxRetryMs?: number;
  /** Writes failing this long: one warning, and status().degraded (/readyz); default 5000 ms. */
  degradedAfterMs?: number;
  /** How long close() keeps trying to write the last counts while another process holds the lock; default 5000 ms. */
  closeTimeoutMs?: number;
  logger?: WriteLogger & { error?(obj: object, msg?: string): void };
}

export interface PersistedCalendar {
  /** Write the counters changed since the last write; false when the write failed (they stay changed). */
  flush(): Promise<boolean>;
  /** Whether the last write succeeded. */
  healthy(): boolean;
  /** The age of the last write and whether writes have failed for long. */
  writeStatus(): WriteStatus;
  /** Stop the timer and write what is left. */
  close(): Promise<void>;
}

const PRUNE_MS = 60_000;
/**
 * Rows per transaction, written or pruned: after a long lock every active key's counters are waiting, and the
 * event loop writes them a batch per turn rather than all at once.
 */
const BATCH_ROWS = 1000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS usage_counters (
    counter_key TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS usage_counters_expiry ON usage_counters (expires_at);
`;

/**
 * The usage_counters table, created when absent (start-up: this may still wait for the lock; a current store is only
 * read), its live rows loaded into `calendar`; then the connection never waits for another process's lock again.
 */
function openCounterTable(db: PersistOptions['db'], calendar: CalendarLimiter): { write(rows: CalendarRow[], t: number): void; pruneDue(): number } {
  const present = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name IN ('usage_counters', 'usage_counters_expiry')").pluck();
  if (present.get() !== 2) db.transaction(() => db.exec(SCHEMA)).immediate();
  const upsert = db.prepare(
    `INSERT INTO usage_counters (counter_key, count, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (counter_key) DO UPDATE SET count = excluded.count, expires_at = excluded.expires_at`,
  );
  // At most BATCH_ROWS expired rows per write (yesterday's day counters all expire at once, just after midnight).
  const prune = db.prepare(
    `DELETE FROM usage_counters WHERE counter_key IN
       (SELECT counter_key FROM usage_counters WHERE expires_at <= ? ORDER BY expires_at LIMIT ${BATCH_ROWS})`,
  );
  let pruneDue = 0; // the first write prunes: what expired while no server ran
  // IMMEDIATE: with busy_timeout 0 a taken lock fails the BEGIN, before any work (never a half-done statement).
  const writeRows = db.transaction((rows: CalendarRow[], t: number) => {
    for (const r of rows) upsert.run(r.key, r.count, r.expiresAt);
    if (t >= pruneDue) pruneDue = prune.run(t).changes < BATCH_ROWS ? t + PRUNE_MS : t;
  });
  const now = Date.now();
  const rows = db.prepare('SELECT counter_key AS key, count, expires_at AS expiresAt FROM usage_counters WHERE expires_at > ?').all(now);
  calendar.load(rows as CalendarRow[], now);
  // The start-up is over: from here this connection never waits for another process's lock.
  neverWait(db);
  return { write: (batch, t) => writeRows.immediate(batch, t), pruneDue: () => pruneDue };
}

/** Load `calendar` from the usage_counters table and keep writing its changes there. */
export function persistCalendar(calendar: CalendarLimiter, opts: PersistOptions): PersistedCalendar {
  const { db } = opts;
  const flushMs = opts.flushMs ?? 250;
  const maxRetryMs = Math.max(flushMs, opts.maxRetryMs ?? 1000);
  const table = openCounterTable(db, calendar);

  const health = trackWrites({ what: 'usage counters', degradedAfterMs: opts.degradedAfterMs ?? 5000, logger: opts.logger });
  let ok = true;
  let more = false;
  let writing: Promise<boolean> = Promise.resolve(true);
  const write = async (): Promise<boolean> => {
    const changed = await calendar.takeChanged();
    if (!db.open) return true;
    const batch = changed.length > BATCH_ROWS ? changed.slice(0, BATCH_ROWS) : changed;
    // The rest waits for the next turn (their values are read again then).
    if (batch !== changed) calendar.markChanged(changed.slice(BATCH_ROWS).map((r) => r.key));
    more = batch !== changed;
    try {
      const t = Date.now();
      const pruning = t >= table.pruneDue();
      if (pruning) calendar.prune(t);
      if (batch.length > 0 || pruning) table.write(batch, t);
      health.succeeded(batch.length);
      ok = true;
    } catch (err) {
      // Kept for the next attempt: SQLITE_BUSY while another process writes, or any other failure.
      calendar.markChanged(batch.map((r) => r.key));
      if (!isBusy(err) && ok) opts.logger?.warn({ err: String(err) }, 'usage counters not written; will retry');
      health.failed(err);
      ok = false;
      more = false;
    }
    return ok;
  };
  const flush = (): Promise<boolean> => (writing = writing.then(write));

  // A timer chain rather than an interval: the wait doubles while writes fail, and a batch left over goes next turn.
  let delay = flushMs;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  const schedule = () => {
    timer = setTimeout(() => {
      void flush().then((written) => {
        delay = written ? flushMs : Math.min(delay * 2, maxRetryMs);
        if (!closed) schedule();
      });
    }, more ? 0 : delay);
    timer.unref();
  };
  schedule();

  return {
    flush,
    // Counting itself never fails here (it is in memory): failed writes are told by writeStatus, not as unready.
    healthy: () => true,
    writeStatus: () => health.status(),
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      // The last counts: retried (without blocking the event loop) until written or closeTimeoutMs has passed.
      const deadline = Date.now() + (opts.closeTimeoutMs ?? 5000);
      let wait = 10;
      for (;;) {
        const written = await flush();
        if (written && !more) return;
        if (!written && Date.now() >= deadline) break;
        if (!written) {
          await new Promise((r) => setTimeout(r, wait));
          wait = Math.min(wait * 2, 500);
        }
      }
      const left = (await calendar.takeChanged()).length;
      opts.logger?.error?.({ counters: left }, 'usage counters not written at shutdown: the database stayed locked; these counts are lost');
    },
  };
}

export interface SqliteCounterStore extends CounterStore {
  /** Write the changed calendar counters now; false when the write failed (they are tried again later). */
  flush(): Promise<boolean>;
  writeStatus(): WriteStatus;
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
    writeStatus: persisted.writeStatus,
    async close() {
      if (closed) return;
      closed = true;
      await persisted.close();
    },
  };
}
