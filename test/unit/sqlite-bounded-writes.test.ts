// Bounded transactions on the embedded store (issue #41): the change feed is pruned, and a file imported, in batches
// of about 1,000 rows, and the lock is free between two batches for another process's writer.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ImportStoppedError, importInBatches } from '../../src/accounts/key-import.js';
import type { KeyStore, NewKey } from '../../src/adapters/keys/key-store.js';
import { createSqliteKeyStore, FEED_PRUNE_BATCH } from '../../src/adapters/keys/sqlite-key-store.js';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { cleanupAfterEach } from '../support/cleanups.js';

const cleanups = cleanupAfterEach();

function open() {
  const dir = cleanups.tempDir('vls-bounded-');
  const db = openDatabase(dir);
  const store = createSqliteKeyStore(db);
  // Another connection, as another process's writer: it never waits, so it succeeds only while the lock is free.
  const other = new Database(join(dir, 'service.db'));
  other.pragma('busy_timeout = 0');
  cleanups.push(() => {
    other.close();
    db.close();
  });
  const feedRows = () => other.prepare('SELECT COUNT(*) FROM api_key_changes').pluck().get() as number;
  return { db, store, other, feedRows };
}

/** Rows straight into api_keys (its triggers fill the feed), as an import of an earlier version left them (its columns). */
function seedRaw(db: Database.Database, n: number): void {
  const insert = db.prepare(`INSERT INTO api_keys (id, name, key_hash, status, per_minute, per_day, per_month, created_at, updated_at) VALUES (?, 'seed', ?, 'active', NULL, NULL, NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`);
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(`key_seed${i}`, `hash${i}`);
  })();
}

describe('the change feed is pruned in batches', () => {
  it('a change on a feed of 14,000 rows deletes 1,000 rows per transaction, and another writer gets the lock in between', async () => {
    const { db, store, other, feedRows } = open();
    seedRaw(db, 14_000);
    const creating = store.create({ name: 'one more' }); // the change and the first prune batch, then a pause
    expect(feedRows()).toBe(14_001 - FEED_PRUNE_BATCH);
    other.exec('BEGIN IMMEDIATE'); // free between two batches: it does not throw SQLITE_BUSY
    other.exec('COMMIT');
    await creating;
    expect(feedRows()).toBe(10_000);
  });

  it('a prune that cannot get the lock is left to the next change; the change itself stands', async () => {
    const { db, store, other, feedRows } = open();
    seedRaw(db, 12_000);
    db.pragma('busy_timeout = 50'); // the CLI waits 5 s; the same path, shorter
    const creating = store.create({ name: 'locked out' });
    other.exec('BEGIN IMMEDIATE'); // held across the store's next batch: it waits its busy_timeout, then gives up
    await creating;
    other.exec('COMMIT');
    expect(await store.isEmpty()).toBe(false);
    expect(feedRows()).toBe(12_001 - FEED_PRUNE_BATCH);
    await store.create({ name: 'next' });
    expect(feedRows()).toBe(10_000);
  });
});

describe('importInBatches', () => {
  const inputs = (n: number): NewKey[] => Array.from({ length: n }, (_, i) => ({ name: `k${i}` }));

  it('creates 2,500 keys as batches of 1,000, 1,000 and 500, handing each over once written, pausing between them', async () => {
    const { store } = open();
    const calls: number[] = [];
    const spy: Pick<KeyStore, 'createMany'> = { createMany: (i) => (calls.push(i.length), store.createMany(i)) };
    const handed: string[] = [];
    const progress: string[] = [];
    let pauses = 0;
    const done = await importInBatches(spy, inputs(2500), {
      onBatch: (c) => handed.push(...c.map((x) => x.record.name)),
      onProgress: (d, t) => progress.push(`${d}/${t}`),
      pause: async () => void pauses++,
    });
    expect([done, calls, pauses]).toEqual([2500, [1000, 1000, 500], 2]);
    expect(handed).toEqual(inputs(2500).map((k) => k.name));
    expect(progress).toEqual(['1000/2500', '2000/2500', '2500/2500']);
    expect((await store.list()).length).toBe(2500);
  });

  it('a failing batch stops the import, saying how many keys were created (and handed over) before it', async () => {
    let n = 0;
    const failing: Pick<KeyStore, 'createMany'> = {
      createMany: async (i) => {
        if (++n === 3) throw new Error('disk full');
        return i.map((k) => ({ record: { id: k.name, name: k.name } as never, key: 'vls_x' }));
      },
    };
    const handed: number[] = [];
    const err = await importInBatches(failing, inputs(5000), { onBatch: (c) => handed.push(c.length) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportStoppedError);
    expect(err).toMatchObject({ done: 2000, total: 5000, message: '2000 of 5000 keys imported before: disk full' });
    expect(handed).toEqual([1000, 1000]);
  });
});
