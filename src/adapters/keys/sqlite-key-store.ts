// Embedded key store on SQLite (WAL) under DATA_DIR, with its change feed; the CLI and every local server share the file.
import type Database from 'better-sqlite3';
import { isBusy, yieldLock } from '../sqlite/database.js';
import {
  MAX_LISTED_CHANGES,
  newKeyRecord,
  type KeyChanges,
  type KeyLimits,
  type KeyRecord,
  type KeyStatus,
  type KeyStore,
  type NewKey,
} from './key-store.js';
import { traced } from '../tracing/spans.js';

/** A key lookup's span attributes (OTel database semantic conventions): the statement's kind, never the hash. */
const SQLITE_READ = { 'db.system.name': 'sqlite', 'db.operation.name': 'SELECT', 'db.collection.name': 'api_keys' };

interface Row {
  id: string;
  name: string;
  key_hash: string;
  status: KeyStatus;
  per_minute: number | null;
  per_day: number | null;
  per_month: number | null;
  /** Absent on a row read before the column was added (never: the store adds it on open). */
  smtp_per_day?: number | null;
  created_at: string;
}

const toRecord = (r: Row): KeyRecord => ({
  id: r.id,
  name: r.name,
  hash: r.key_hash,
  status: r.status,
  perMinute: r.per_minute,
  perDay: r.per_day,
  perMonth: r.per_month,
  smtpPerDay: r.smtp_per_day ?? null,
  createdAt: r.created_at,
});

/**
 * The change feed (docs/keys.md): triggers write one (seq, key hash) row per changed key in the
 * transaction that changes it, whichever program writes (this store, an older CLI, a manual edit).
 * `api_keys_version` is the previous version's change counter, still moved for its servers during an upgrade.
 * Every statement is idempotent: opening a DATA_DIR of an earlier version adds what it lacks.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'revoked')),
    per_minute INTEGER,
    per_day INTEGER,
    per_month INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS api_keys_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
  INSERT OR IGNORE INTO api_keys_version (id, version) VALUES (1, 0);
  CREATE TABLE IF NOT EXISTS api_key_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, key_hash TEXT NOT NULL);
  CREATE TRIGGER IF NOT EXISTS api_keys_feed_insert AFTER INSERT ON api_keys BEGIN
    INSERT INTO api_key_changes (key_hash) VALUES (NEW.key_hash);
  END;
  CREATE TRIGGER IF NOT EXISTS api_keys_feed_update AFTER UPDATE ON api_keys BEGIN
    INSERT INTO api_key_changes (key_hash) VALUES (NEW.key_hash);
    INSERT INTO api_key_changes (key_hash) SELECT OLD.key_hash WHERE OLD.key_hash <> NEW.key_hash;
  END;
  CREATE TRIGGER IF NOT EXISTS api_keys_feed_delete AFTER DELETE ON api_keys BEGIN
    INSERT INTO api_key_changes (key_hash) VALUES (OLD.key_hash);
  END;
`;

/** What SCHEMA creates: when all of it is there, opening the store takes no write lock at all. */
const SCHEMA_OBJECTS = ['api_keys', 'api_keys_version', 'api_key_changes', 'api_keys_feed_insert', 'api_keys_feed_update', 'api_keys_feed_delete'];

/** Feed rows kept: a reader further behind than this (or than MAX_LISTED_CHANGES) clears its cache instead. */
const FEED_RETAINED = 10_000;
/** Feed rows deleted per transaction: no other process waits long for the lock while a large feed is pruned. */
export const FEED_PRUNE_BATCH = 1000;

type Changed = <A extends unknown[]>(fn: (...a: A) => boolean) => (...a: A) => Promise<boolean>;

/**
 * The change feed: `changed` wraps a write so that it and its feed rows commit in one transaction (the version
 * bumped), the feed pruned after it in transactions of its own; `readChanges` reads the rows after a cursor.
 */
function changeFeed(db: Database.Database): { changed: Changed; readChanges: (cursor: string | null) => KeyChanges } {
  const bump = db.prepare('UPDATE api_keys_version SET version = version + 1 WHERE id = 1');
  const feedHead = db.prepare(
    `SELECT (SELECT MIN(seq) FROM api_key_changes) AS lo,
            (SELECT seq FROM sqlite_sequence WHERE name = 'api_key_changes') AS hi`,
  );
  const feedSince = db.prepare('SELECT key_hash FROM api_key_changes WHERE seq > ? AND seq <= ? ORDER BY seq').pluck();
  const prune = db.prepare('DELETE FROM api_key_changes WHERE seq <= ?');
  const head = () => feedHead.get() as { lo: number | null; hi: number | null };
  // One batch: the oldest rows beyond the retained ones, at most FEED_PRUNE_BATCH of them; false when none is left.
  const pruneStep = db.transaction((): boolean => {
    const { lo, hi } = head();
    if (lo === null || hi === null || lo > hi - FEED_RETAINED) return false;
    prune.run(Math.min(hi - FEED_RETAINED, lo + FEED_PRUNE_BATCH - 1));
    return true;
  });
  /**
   * Down to the newest FEED_RETAINED rows (a million rows left by an import of an earlier version: a thousand
   * batches), yielding the lock between batches. Best effort: the change itself is committed, and a prune that
   * cannot get the lock is left to the next change.
   */
  async function pruneFeed(): Promise<void> {
    try {
      for (;;) {
        const t0 = performance.now();
        if (!pruneStep.immediate()) return;
        await yieldLock(performance.now() - t0);
      }
    } catch (err) {
      if (!isBusy(err)) throw err;
    }
  }
  const changed: Changed = <A extends unknown[]>(fn: (...a: A) => boolean) => {
    const tx = db.transaction((...a: A) => {
      const ok = fn(...a);
      if (ok) bump.run();
      return ok;
    });
    return async (...a: A): Promise<boolean> => {
      // IMMEDIATE: the write lock first, so a concurrent writer is waited for here, never met half-way.
      const ok = tx.immediate(...a);
      if (ok) await pruneFeed();
      return ok;
    };
  };
  // One read transaction: the head and the rows after the cursor come from the same snapshot.
  const readChanges = db.transaction((cursor: string | null): KeyChanges => {
    const { lo, hi: max } = head();
    const hi = max ?? 0;
    const from = cursor === null ? NaN : Number(cursor);
    const reset: KeyChanges = { cursor: String(hi), hashes: [], reset: true };
    // Unreadable, ahead of the file (a database replaced under us), too far behind, or behind pruned rows.
    if (!Number.isSafeInteger(from) || from > hi || hi - from > MAX_LISTED_CHANGES) return reset;
    if (from === hi) return { cursor: String(hi), hashes: [], reset: false };
    if (lo === null || from < lo - 1) return reset;
    return { cursor: String(hi), hashes: feedSince.all(from, hi) as string[], reset: false };
  });
  return { changed, readChanges };
}

/** The three writes (create, status, limits), each with its feed rows through `changed`. */
function keyWrites(db: Database.Database, changed: Changed) {
  const insert = db.prepare(
    `INSERT INTO api_keys (id, name, key_hash, status, per_minute, per_day, per_month, smtp_per_day, created_at, updated_at)
     VALUES (@id, @name, @hash, 'active', @perMinute, @perDay, @perMonth, @smtpPerDay, @now, @now)`,
  );
  const selectOne = db.prepare('SELECT * FROM api_keys WHERE id = ?');
  const setStatus = db.prepare('UPDATE api_keys SET status = ?, updated_at = ? WHERE id = ?');
  const create = changed((recs: KeyRecord[]) => {
    for (const rec of recs) insert.run({ ...rec, now: rec.createdAt });
    return recs.length > 0;
  });
  const status = changed((id: string, next: KeyStatus) => {
    const row = selectOne.get(id) as Row | undefined;
    // A revoked key stays revoked: revocation is final.
    if (!row || (row.status === 'revoked' && next !== 'revoked')) return false;
    return setStatus.run(next, new Date().toISOString(), id).changes === 1;
  });
  const limits = changed((id: string, given: Partial<KeyLimits>) => {
    const sets: string[] = [];
    const args: Record<string, unknown> = { id, now: new Date().toISOString() };
    for (const [k, col] of [['perMinute', 'per_minute'], ['perDay', 'per_day'], ['perMonth', 'per_month'], ['smtpPerDay', 'smtp_per_day']] as const) {
      if (given[k] !== undefined) {
        sets.push(`${col} = @${k}`);
        args[k] = given[k];
      }
    }
    if (sets.length === 0) return selectOne.get(id) !== undefined;
    return db.prepare(`UPDATE api_keys SET ${sets.join(', ')}, updated_at = @now WHERE id = @id`).run(args).changes === 1;
  });
  return { create, status, limits };
}

export function createSqliteKeyStore(db: Database.Database): KeyStore {
  const present = db.prepare(`SELECT COUNT(*) FROM sqlite_master WHERE name IN (${SCHEMA_OBJECTS.map(() => '?').join(', ')})`).pluck();
  // IMMEDIATE: two processes opening an old DATA_DIR at once migrate it one after the other. A current store is
  // only read: a start or a CLI command does not queue for the lock behind another writer.
  if (present.get(...SCHEMA_OBJECTS) !== SCHEMA_OBJECTS.length) db.transaction(() => db.exec(SCHEMA)).immediate();
  // The SMTP quota's column (issue #55): added to a DATA_DIR of an earlier version, once, under the write lock.
  const hasSmtp = () => db.prepare("SELECT COUNT(*) FROM pragma_table_info('api_keys') WHERE name = 'smtp_per_day'").pluck().get() === 1;
  if (!hasSmtp()) db.transaction(() => hasSmtp() || db.exec('ALTER TABLE api_keys ADD COLUMN smtp_per_day INTEGER')).immediate();
  const selectAll = db.prepare('SELECT * FROM api_keys ORDER BY created_at, id');
  const selectOne = db.prepare('SELECT * FROM api_keys WHERE id = ?');
  const selectByHash = db.prepare('SELECT * FROM api_keys WHERE key_hash = ?');
  const selectAny = db.prepare('SELECT EXISTS (SELECT 1 FROM api_keys)').pluck();
  const { changed, readChanges } = changeFeed(db);
  const writes = keyWrites(db, changed);

  return {
    async create(input: NewKey) {
      const created = newKeyRecord(input);
      await writes.create([created.record]);
      return created;
    },
    async createMany(inputs) {
      const created = inputs.map(newKeyRecord);
      await writes.create(created.map((c) => c.record));
      return created;
    },
    async list() {
      return (selectAll.all() as Row[]).map(toRecord);
    },
    async get(id) {
      const row = selectOne.get(id) as Row | undefined;
      return row ? toRecord(row) : null;
    },
    async findByHash(hash) {
      const row = (await traced('SELECT api_keys', SQLITE_READ, async () => selectByHash.get(hash))) as Row | undefined;
      return row ? toRecord(row) : null;
    },
    async isEmpty() {
      return selectAny.get() === 0;
    },
    async setStatus(id, status) {
      return writes.status(id, status);
    },
    async updateLimits(id, limits) {
      return writes.limits(id, limits);
    },
    async changes(cursor) {
      return readChanges(cursor);
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
