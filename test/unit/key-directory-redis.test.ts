// KeyDirectory on the Redis key store (real redis-server): lookup by hash, the change stream seen by other
// instances at their next poll, the reset when the stream cannot list changes, and keys written by the previous version.
// @module-tag slow (left out of make test-fast): starts redis-server and the keys CLI
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KeyDirectory } from '../../src/accounts/key-directory.js';
import { hashKey } from '../../src/adapters/keys/key-store.js';
import { CREATE_LUA } from '../../src/adapters/keys/redis-key-scripts.js';
import { createRedisKeyStore } from '../../src/adapters/keys/redis-key-store.js';
import { COMMAND_TIMEOUT_MS, redisAvailable, startRedisServer, type TestRedis } from '../support/redis-server.js';
import { runKeysCli } from '../support/server-process.js';
import { outcome } from '../support/key-records.js';
import { waitFor } from '../support/wait.js';

const HAVE_REDIS = redisAvailable();

describe.skipIf(!HAVE_REDIS)('KeyDirectory on Redis (real redis-server)', () => {
  let redis: TestRedis;
  let raw: Redis;
  let n = 0;
  const closers: Array<() => Promise<void> | void> = [];
  beforeAll(async () => {
    redis = await startRedisServer();
    raw = new Redis(redis.url);
  });
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    raw?.disconnect();
    await redis?.stop();
  });

  /** An instance: its own connection and directory, polling every 250 ms like a server. */
  async function instance(prefix: string) {
    const store = createRedisKeyStore({ url: redis.url, keyPrefix: prefix, commandTimeoutMs: COMMAND_TIMEOUT_MS });
    closers.push(() => store.close());
    await store.ready();
    const lookups = { n: 0 };
    const findByHash = store.findByHash.bind(store);
    const dir = new KeyDirectory({ store: { ...store, findByHash: (h) => (lookups.n++, findByHash(h)) } });
    await dir.refresh();
    dir.start();
    closers.push(() => dir.stop());
    return { store, dir, lookups };
  }
  const prefix = () => `t-kd${++n}:`;

  it('finds keys by hash with one lookup each, caches both answers, and never lists the store', async () => {
    const p = prefix();
    const { store, dir, lookups } = await instance(p);
    const { record, key } = await store.create({ name: 'a', perDay: 3 });
    await dir.refresh();
    const list = vi.spyOn(store, 'list');
    for (let i = 0; i < 3; i++) {
      expect(await dir.authenticate(key)).toEqual(record);
      expect(await outcome(dir.authenticate('vls_not-a-key'))).toBe('403 FORBIDDEN');
    }
    expect(lookups.n).toBe(2);
    expect(list).not.toHaveBeenCalled();
    expect(await raw.hget(`${p}keys:by-hash`, record.hash)).toBe(record.id);
  });

  it('a revocation and a deactivation through the CLI process reach two other instances', { timeout: 180_000 }, async () => {
    // The CLI writes under the default prefix: so do these instances.
    const [a, b] = [await instance('vls:'), await instance('vls:')];
    const r = await a.store.create({ name: 'cli-revoke' });
    const d = await a.store.create({ name: 'cli-deactivate' });
    await Promise.all([a.dir.refresh(), b.dir.refresh()]);
    for (const { dir } of [a, b]) for (const k of [r, d]) expect(await outcome(dir.authenticate(k.key))).toBe(k.record.id);
    const cli = (...args: string[]) => runKeysCli(args, { env: { REDIS_URL: redis.url } });
    expect((await cli('revoke', r.record.id)).code).toBe(0);
    expect((await cli('deactivate', d.record.id)).code).toBe(0);
    for (const { dir } of [a, b]) {
      await waitFor(async () => (await outcome(dir.authenticate(r.key))) === '403 FORBIDDEN' && (await outcome(dir.authenticate(d.key))) === '403 FORBIDDEN', {
        intervalMs: 20,
        what: 'both keys refused',
      });
    }
  });

  it('a key cached as unknown by another instance is usable there once created', async () => {
    const p = prefix();
    const { dir } = await instance(p);
    const key = 'vls_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC';
    expect(await outcome(dir.authenticate(key))).toBe('403 FORBIDDEN');
    // The store's own create script, with a key chosen here so that it could be presented before it existed.
    const record = { id: 'key_0000000000cc', name: 'late', hash: hashKey(key), status: 'active', perMinute: null, perDay: null, perMonth: null, createdAt: new Date().toISOString() };
    const names = ['keys', 'keys:by-hash', 'keys:version', 'keys:changes'].map((s) => p + s);
    expect(await raw.eval(CREATE_LUA, 4, ...names, 1000, 1000, record.id, record.hash, JSON.stringify(record))).toBe(1);
    await waitFor(async () => (await outcome(dir.authenticate(key))) === record.id, { intervalMs: 20, what: 'the key usable' });
  });

  it('a change the stream does not hold (a writer of the previous version, or too many at once) clears the cache', async () => {
    const p = prefix();
    const { store, dir, lookups } = await instance(p);
    const { record, key } = await store.create({ name: 'gap' });
    await dir.refresh();
    await dir.authenticate(key);
    // The previous version's status change: the record and the counter, no stream entry.
    const json = JSON.parse((await raw.hget(`${p}keys`, record.id))!);
    await raw.hset(`${p}keys`, record.id, JSON.stringify({ ...json, status: 'inactive' }));
    await raw.incr(`${p}keys:version`);
    await store.create({ name: 'after the gap' }); // a listed change follows the unlisted one
    await dir.refresh();
    expect(await outcome(dir.authenticate(key))).toBe('403 FORBIDDEN');
    expect(lookups.n).toBe(2);
    // More than the stream lists in one entry.
    const before = (await store.changes(null)).cursor;
    await store.createMany(Array.from({ length: 1001 }, (_, i) => ({ name: `bulk-${i}` })));
    expect(await store.changes(before)).toMatchObject({ reset: true, hashes: [] });
  });

  it('keys written by the previous version (no index by hash) are indexed on first open and found', async () => {
    const p = prefix();
    const key = 'vls_DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD';
    const old = { id: 'key_0000000000dd', name: 'old', hash: hashKey(key), status: 'active', perMinute: 4, perDay: null, perMonth: null, createdAt: '2025-01-01T00:00:00.000Z' };
    await raw.hset(`${p}keys`, old.id, JSON.stringify({ ...old, updatedAt: old.createdAt }));
    for (let i = 0; i < 2500; i++) await raw.hset(`${p}keys`, `key_filler${i}`, JSON.stringify({ ...old, id: `key_filler${i}`, hash: `h${i}` }));
    await raw.set(`${p}keys:version`, '7');
    const { store, dir } = await instance(p);
    expect(await dir.authenticate(key)).toMatchObject({ id: old.id, perMinute: 4 });
    expect(await raw.get(`${p}keys:schema`)).toBe('2');
    expect(await raw.hlen(`${p}keys:by-hash`)).toBe(2501);
    expect(await store.isEmpty()).toBe(false);
    expect(await store.setStatus(old.id, 'revoked')).toBe(true);
    await dir.refresh();
    expect(await outcome(dir.authenticate(key))).toBe('403 FORBIDDEN');
  });

  it('isEmpty on a fresh prefix', async () => {
    const { store } = await instance(prefix());
    expect(await store.isEmpty()).toBe(true);
    await store.create({ name: 'x' });
    expect(await store.isEmpty()).toBe(false);
  });
});
