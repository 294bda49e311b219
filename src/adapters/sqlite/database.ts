// The service database (SQLite in WAL mode under DATA_DIR, docs/adr/0002): opening it, and the lock discipline every
// writer on it follows (the key store, the limit counters, the keys CLI: docs/adr/0019).
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { ConfigError } from '../../errors.js';
import { ensureDirectorySync, ensurePrivateFileSync } from '../files/startup-files.js';

/** Open (and create when absent) the service database under dataDir (or another file there: jobs.db). Start-up only: synchronous. */
export function openDatabase(dataDir: string, name = 'service.db'): Database.Database {
  ensureDirectorySync('DATA_DIR', dataDir);
  const file = join(dataDir, name);
  let db: Database.Database;
  try {
    // precision: created 0600 before SQLite opens it (its -wal and -shm then get the same mode).
    ensurePrivateFileSync(file, [`${file}-wal`, `${file}-shm`]);
    db = new Database(file);
  } catch (err) {
    throw new ConfigError('DATA_DIR', `${file} cannot be opened: ${(err as Error).message}`);
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // The CLI and the start-up may wait for another writer; a serving process stops waiting once it serves
  // (neverWait, called by the counters' writer: docs/adr/0019).
  db.pragma('busy_timeout = 5000');
  return db;
}

/**
 * From now on this connection never waits for another process's lock: a write finds it taken and fails at once
 * with SQLITE_BUSY (its caller retries later), and reads in WAL mode never need it. For the serving process.
 */
export function neverWait(db: Database.Database): void {
  db.pragma('busy_timeout = 0');
}

/** Whether the error is SQLite's "another connection holds the lock" (SQLITE_BUSY and its extended codes). */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Give other processes the write lock for at least as long as this one just held it: a process writing batches in
 * a loop would otherwise take the lock back within microseconds, and a writer that never waits (the server's)
 * would find it taken at almost every try.
 */
export function yieldLock(heldMs: number): Promise<void> {
  return sleep(Math.max(1, Math.ceil(heldMs)));
}
