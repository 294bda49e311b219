// Embedded key store on SQLite (WAL) under DATA_DIR; the CLI and every local server share the file.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../config.js';
import { ensureDirectorySync, ensurePrivateFileSync } from './startup-files.js';
import {
  newKeyRecord,
  type KeyLimits,
  type KeyRecord,
  type KeyStatus,
  type KeyStore,
  type NewKey,
} from './key-store.js';

interface Row {
  id: string;
  name: string;
  key_hash: string;
  status: KeyStatus;
  per_minute: number | null;
  per_day: number | null;
  per_month: number | null;
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
  createdAt: r.created_at,
});

/** Open (and create when absent) the service database under dataDir. Start-up only: synchronous. */
export function openDatabase(dataDir: string): Database.Database {
  ensureDirectorySync('DATA_DIR', dataDir);
  const file = join(dataDir, 'service.db');
  let db: Database.Database;
  try {
    // precision: created 0600 before SQLite opens it (its -wal and -shm then get the same mode).
    ensurePrivateFileSync(file, [`${file}-wal`, `${file}-shm`]);
    db = new Database(file);
  } catch (err) {
    throw new ConfigError('DATA_DIR', `${join(dataDir, 'service.db')} cannot be opened: ${(err as Error).message}`);
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  return db;
}

export function createSqliteKeyStore(db: Database.Database): KeyStore {
  db.exec(`
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
  `);
  const insert = db.prepare(
    `INSERT INTO api_keys (id, name, key_hash, status, per_minute, per_day, per_month, created_at, updated_at)
     VALUES (@id, @name, @hash, 'active', @perMinute, @perDay, @perMonth, @now, @now)`,
  );
  const bump = db.prepare('UPDATE api_keys_version SET version = version + 1 WHERE id = 1');
  const selectAll = db.prepare('SELECT * FROM api_keys ORDER BY created_at, id');
  const selectOne = db.prepare('SELECT * FROM api_keys WHERE id = ?');
  const setStatus = db.prepare('UPDATE api_keys SET status = ?, updated_at = ? WHERE id = ?');
  const selectVersion = db.prepare('SELECT version FROM api_keys_version WHERE id = 1');
  const changed = <A extends unknown[]>(fn: (...a: A) => boolean) =>
    db.transaction((...a: A) => {
      const ok = fn(...a);
      if (ok) bump.run();
      return ok;
    });

  const doCreate = changed((rec: KeyRecord) => insert.run({ ...rec, now: rec.createdAt }).changes === 1);
  const doStatus = changed((id: string, status: KeyStatus) => {
    const row = selectOne.get(id) as Row | undefined;
    // A revoked key stays revoked: revocation is final.
    if (!row || (row.status === 'revoked' && status !== 'revoked')) return false;
    return setStatus.run(status, new Date().toISOString(), id).changes === 1;
  });
  const doLimits = changed((id: string, limits: Partial<KeyLimits>) => {
    const sets: string[] = [];
    const args: Record<string, unknown> = { id, now: new Date().toISOString() };
    for (const [k, col] of [['perMinute', 'per_minute'], ['perDay', 'per_day'], ['perMonth', 'per_month']] as const) {
      if (limits[k] !== undefined) {
        sets.push(`${col} = @${k}`);
        args[k] = limits[k];
      }
    }
    if (sets.length === 0) return selectOne.get(id) !== undefined;
    return db.prepare(`UPDATE api_keys SET ${sets.join(', ')}, updated_at = @now WHERE id = @id`).run(args).changes === 1;
  });

  return {
    async create(input: NewKey) {
      const { record, key } = newKeyRecord(input);
      doCreate(record);
      return { record, key };
    },
    async list() {
      return (selectAll.all() as Row[]).map(toRecord);
    },
    async get(id) {
      const row = selectOne.get(id) as Row | undefined;
      return row ? toRecord(row) : null;
    },
    async setStatus(id, status) {
      return doStatus(id, status);
    },
    async updateLimits(id, limits) {
      return doLimits(id, limits);
    },
    async version() {
      return String((selectVersion.get() as { version: number }).version);
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
