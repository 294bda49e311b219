// KeyDirectory on a real SQLite store: lookup by hash, bounded positive and negative caches, the change feed
// (another process's change seen at the next poll), a lookup racing a change, and a DATA_DIR of the previous version.
// @module-tag slow (left out of make test-fast): starts processes
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { KeyDirectory } from '../../src/accounts/key-directory.js';
import { hashKey, MAX_LISTED_CHANGES, type KeyStore } from '../../src/adapters/keys/key-store.js';
import { createSqliteKeyStore } from '../../src/adapters/keys/sqlite-key-store.js';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { outcome } from '../support/key-records.js';
import { waitFor } from '../support/wait.js';
import { cleanupAfterEach } from '../support/cleanups.js';

const run = promisify(execFile);
const cleanups = cleanupAfterEach();
const tempDir = () => cleanups.tempDir('vls-keydir-');

/** The store, with its calls counted (and findByHash delayable) to see what the directory asks of it. */
function counted(store: KeyStore) {
  const calls = { list: 0, findByHash: 0, changes: 0 };
  let gate: Promise<void> | null = null;
  const wrapped: KeyStore = {
    ...store,
    list: () => (calls.list++, store.list()),
    changes: (c) => (calls.changes++, store.changes(c)),
    findByHash: async (h) => {
      calls.findByHash++;
      const answer = await store.findByHash(h); // read now, as the store does
      if (gate) await gate;
      return answer;
    },
  };
  return { store: wrapped, calls, hold: (p: Promise<void> | null) => (gate = p) };
}

async function setup(opts: { maxUnknown?: number; maxKnown?: number } = {}) {
  const dataDir = tempDir();
  const raw = createSqliteKeyStore(openDatabase(dataDir));
  cleanups.push(() => raw.close());
  const c = counted(raw);
  const dir = new KeyDirectory({ store: c.store, refreshMs: 250, ...opts });
  await dir.refresh();
  cleanups.push(() => dir.stop());
  return { dataDir, raw, dir, ...c };
}

/** Runs code against the store in another node process (as the CLI or another server would). */
async function inOtherProcess(dataDir: string, body: string): Promise<string> {
  const code = `const { createSqliteKeyStore } = await import(${JSON.stringify(new URL('../../src/adapters/keys/sqlite-key-store.ts', import.meta.url).pathname)});
const { openDatabase } = await import(${JSON.stringify(new URL('../../src/adapters/sqlite/database.ts', import.meta.url).pathname)});
const db = openDatabase(process.argv[1]);
const store = createSqliteKeyStore(db);
${body}
await store.close();`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, dataDir]);
  return stdout.trim();
}

describe('KeyDirectory lookup and caches (SQLite)', () => {
  it('answers by hash: the record of an active key; 401 absent or empty; 403 unknown, inactive, revoked, over-long', async () => {
    const { raw, dir, calls } = await setup();
    const active = await raw.create({ name: 'a' });
    const inactive = await raw.create({ name: 'i' });
    const revoked = await raw.create({ name: 'r' });
    await raw.setStatus(inactive.record.id, 'inactive');
    await raw.setStatus(revoked.record.id, 'revoked');
    expect(await dir.authenticate(active.key)).toEqual(active.record);
    expect(await dir.authenticate([active.key, 'other'])).toEqual(active.record);
    expect([await outcome(dir.authenticate(undefined)), await outcome(dir.authenticate(''))]).toEqual(['401 UNAUTHORIZED', '401 UNAUTHORIZED']);
    for (const k of [inactive.key, revoked.key, 'vls_nope', active.key.slice(0, -1), active.record.hash]) {
      expect(await outcome(dir.authenticate(k))).toBe('403 FORBIDDEN');
    }
    const before = calls.findByHash;
    expect(await outcome(dir.authenticate('x'.repeat(257)))).toBe('403 FORBIDDEN');
    expect(calls.findByHash).toBe(before);
    expect(calls.list).toBe(0);
  });

  it('caches known and unknown answers: one store lookup per key, however often it is presented', async () => {
    const { raw, dir, calls } = await setup();
    const { key } = await raw.create({ name: 'cached' });
    for (let i = 0; i < 5; i++) {
      await dir.authenticate(key);
      await outcome(dir.authenticate('vls_unknown-key'));
    }
    expect(calls.findByHash).toBe(2);
    // Concurrent first requests for one key share one lookup.
    const fresh = await raw.create({ name: 'concurrent' });
    await Promise.all(Array.from({ length: 10 }, () => dir.authenticate(fresh.key)));
    expect(calls.findByHash).toBe(3);
    expect(dir.stats()).toMatchObject({ hits: 17, misses: 3, size: 3 });
  });

  it('unknown keys cannot grow the caches beyond their bounds, nor push known keys out', async () => {
    const { raw, dir, calls } = await setup({ maxUnknown: 100, maxKnown: 10 });
    const { key } = await raw.create({ name: 'kept' });
    await dir.authenticate(key);
    for (let i = 0; i < 2000; i++) expect(await outcome(dir.authenticate(`vls_random-${i}`))).toBe('403 FORBIDDEN');
    expect(dir.stats().size).toBeLessThanOrEqual(101);
    const lookups = calls.findByHash;
    await dir.authenticate(key);
    expect(calls.findByHash).toBe(lookups); // still cached
  });
});

describe('KeyDirectory change feed (SQLite)', () => {
  it('another process revokes, deactivates, changes limits: seen at the next poll; only the changed keys are looked up again', async () => {
    const { dataDir, raw, dir, calls } = await setup();
    dir.start();
    const keys = await Promise.all(['r', 'd', 'l', 'untouched'].map((name) => raw.create({ name })));
    await dir.refresh(); // their creation is in the feed: read it before they are cached
    for (const k of keys) await dir.authenticate(k.key);
    const lookups = calls.findByHash;
    const [r, d, l] = keys;
    await inOtherProcess(
      dataDir,
      `await store.setStatus(${JSON.stringify(r.record.id)}, 'revoked');
       await store.setStatus(${JSON.stringify(d.record.id)}, 'inactive');
       await store.updateLimits(${JSON.stringify(l.record.id)}, { perDay: 42 });`,
    );
    await waitFor(
      async () =>
        (await outcome(dir.authenticate(r.key))) === '403 FORBIDDEN' &&
        (await outcome(dir.authenticate(d.key))) === '403 FORBIDDEN' &&
        (await dir.authenticate(l.key)).perDay === 42,
      { intervalMs: 20, what: 'the revocation, the deactivation and the new limit' },
    );
    await dir.authenticate(keys[3].key);
    expect(calls.findByHash - lookups).toBe(3); // the untouched key stayed cached
    expect(calls.list).toBe(0);
  });

  it('a key cached as unknown becomes usable at the next poll once another process writes it (even a writer without the feed code)', async () => {
    const { dataDir, dir } = await setup();
    dir.start();
    const key = 'vls_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    expect(await outcome(dir.authenticate(key))).toBe('403 FORBIDDEN');
    // A plain INSERT naming the previous version's columns, as its CLI writes (no smtp_per_day, added by issue #55):
    // the triggers put it in the feed.
    await inOtherProcess(
      dataDir,
      `db.prepare("INSERT INTO api_keys (id, name, key_hash, status, per_minute, per_day, per_month, created_at, updated_at) VALUES ('key_000000000042', 'raw', ?, 'active', NULL, NULL, NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')").run(${JSON.stringify(hashKey(key))});`,
    );
    await waitFor(async () => (await outcome(dir.authenticate(key))) === 'key_000000000042', { intervalMs: 20, what: 'the key usable' });
  });

  it('a lookup answered before a change but settled after the feed reported it is not cached', async () => {
    const { raw, dir, hold } = await setup();
    const { record, key } = await raw.create({ name: 'race' });
    let release!: () => void;
    hold(new Promise<void>((r) => (release = r)));
    const first = dir.authenticate(key); // reads the active record now, settles later
    await raw.setStatus(record.id, 'revoked');
    await dir.refresh(); // the feed names the key while the lookup is in flight
    release();
    hold(null);
    expect(await outcome(first)).toBe(record.id); // answered as of its read
    expect(await outcome(dir.authenticate(key))).toBe('403 FORBIDDEN'); // not served from a stale cache entry
  });

  it('more changes than the feed lists clear the caches; the changes are all seen', async () => {
    const { raw, dir, calls } = await setup();
    const { record, key } = await raw.create({ name: 'before' });
    await dir.authenticate(key);
    await raw.setStatus(record.id, 'inactive');
    await raw.createMany(Array.from({ length: MAX_LISTED_CHANGES + 1 }, (_, i) => ({ name: `bulk-${i}` })));
    const lookups = calls.findByHash;
    await dir.refresh();
    expect(await outcome(dir.authenticate(key))).toBe('403 FORBIDDEN');
    expect(calls.findByHash).toBe(lookups + 1);
  });

  it('the feed keeps the last 10,000 changes; a reader behind the pruned ones is told to reset', async () => {
    const { dataDir, raw } = await setup();
    const start = (await raw.changes(null)).cursor;
    await raw.createMany(Array.from({ length: 10_050 }, (_, i) => ({ name: `k${i}` })));
    const db = new Database(join(dataDir, 'service.db'), { readonly: true });
    cleanups.push(() => void db.close());
    expect(db.prepare('SELECT COUNT(*) FROM api_key_changes').pluck().get()).toBe(10_000);
    expect(await raw.changes(start)).toMatchObject({ reset: true, hashes: [] });
    const head = (await raw.changes(null)).cursor;
    const one = await raw.create({ name: 'one more' });
    expect(await raw.changes(head)).toEqual({ cursor: String(Number(head) + 1), hashes: [one.record.hash], reset: false });
  });

  it('isEmpty: true for a new store, false once a key exists', async () => {
    const { raw } = await setup();
    expect(await raw.isEmpty()).toBe(true);
    await raw.create({ name: 'first' });
    expect(await raw.isEmpty()).toBe(false);
  });
});

describe('a DATA_DIR written by the previous version', () => {
  /** The previous version's schema and writes, verbatim: no feed table, no triggers. */
  function previousVersion(dataDir: string, hash: string): void {
    const db = new Database(join(dataDir, 'service.db'));
    db.pragma('journal_mode = WAL');
    db.exec(`
      CREATE TABLE IF NOT EXISTS api_keys (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, key_hash TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'revoked')),
        per_minute INTEGER, per_day INTEGER, per_month INTEGER, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS api_keys_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
      INSERT OR IGNORE INTO api_keys_version (id, version) VALUES (1, 0);
      CREATE TABLE IF NOT EXISTS usage_counters (counter_key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
    `);
    db.prepare("INSERT INTO api_keys VALUES ('key_0000000000aa', 'old', ?, 'active', 9, NULL, NULL, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')").run(hash);
    db.prepare('UPDATE api_keys_version SET version = version + 1 WHERE id = 1').run();
    db.close();
  }

  it('keeps serving its keys, gains the change feed, and keeps moving the old version counter', async () => {
    const dataDir = tempDir();
    const oldKey = 'vls_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
    previousVersion(dataDir, hashKey(oldKey));
    const store = createSqliteKeyStore(openDatabase(dataDir));
    cleanups.push(() => store.close());
    createSqliteKeyStore(openDatabase(dataDir)).close(); // a second opener (the CLI) migrates nothing twice
    const dir = new KeyDirectory({ store });
    await dir.refresh();
    expect(await dir.authenticate(oldKey)).toMatchObject({ id: 'key_0000000000aa', name: 'old', perMinute: 9, status: 'active' });
    expect(await store.isEmpty()).toBe(false);
    expect(await store.setStatus('key_0000000000aa', 'revoked')).toBe(true);
    await dir.refresh();
    expect(await outcome(dir.authenticate(oldKey))).toBe('403 FORBIDDEN');
    const db = new Database(join(dataDir, 'service.db'), { readonly: true });
    cleanups.push(() => void db.close());
    expect(db.prepare('SELECT version FROM api_keys_version').pluck().get()).toBe(2); // servers of the previous version still see changes
  });
});
