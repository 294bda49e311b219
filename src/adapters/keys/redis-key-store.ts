// API key store on Redis (REDIS_URL): records by id, an index by SHA-256, and a change stream (docs/keys.md).
//
// Layout (prefix default `vls:`): `vls:keys` hash, field = key id, value = JSON KeyRecord (+ updatedAt);
// `vls:keys:by-hash` hash, field = SHA-256 hex, value = key id (the request path's one lookup);
// `vls:keys:version` the change sequence, INCR'd by every change; `vls:keys:changes` a stream with one entry
// `0-<sequence>` per change naming the changed key hashes (servers poll it and evict exactly those).
// `vls:keys:schema` = 2 once the index covers the keys written by an earlier version (built on first open).
// Every change is one Lua script (redis-key-scripts.ts): atomic across the CLI and all instances.
// Redis must persist its data (RDB or AOF) in production: a Redis that restarts empty forgets every key.
import type { Redis } from 'ioredis';
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
import { CREATE_LUA, FEED_LUA, LIMITS_LUA, LOOKUP_LUA, STATUS_LUA } from './redis-key-scripts.js';
import { closeClient, createRedisClient, waitForReady, type RedisClientOptions } from '../redis/redis-client.js';
import { traced } from '../tracing/spans.js';
import { redisAttributes } from '../redis/redis-client.js';

interface RedisKeyStoreOptions extends RedisClientOptions {
  /** REDIS_URL; ignored when `client` is given. */
  url?: string;
  /** An existing client (not closed by close()). */
  client?: Redis;
  /** Prefix of every Redis key; default `vls:`. */
  keyPrefix?: string;
}

/** Stream entries kept (each lists up to MAX_LISTED_CHANGES hashes); a reader further behind starts afresh. */
const FEED_RETAINED = 1000;
/** Stream entries read per round trip. */
const FEED_BATCH = 100;
const SCHEMA = '2';

type Script = (numKeys: number, ...args: Array<string | number>) => Promise<unknown>;
type StreamEntry = [id: string, fields: string[]];

function toRecord(raw: string): KeyRecord {
  const r = JSON.parse(raw) as Partial<KeyRecord>;
  const limit = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  return {
    id: String(r.id),
    name: String(r.name),
    hash: String(r.hash),
    status: (r.status ?? 'inactive') as KeyStatus,
    perMinute: limit(r.perMinute),
    perDay: limit(r.perDay),
    perMonth: limit(r.perMonth),
    smtpPerDay: limit(r.smtpPerDay),
    createdAt: String(r.createdAt),
  };
}

/** The hashes a run of stream entries names from `cursor` on; a reset when one is missing or says so. */
function readFeed(cursor: number, head: number, entries: StreamEntry[]): KeyChanges {
  const reset: KeyChanges = { cursor: String(head), hashes: [], reset: true };
  const hashes: string[] = [];
  let at = cursor;
  for (const [id, fields] of entries) {
    if (id !== `0-${at + 1}`) return reset; // pruned, or written by a program that keeps no feed
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (fields[i] === 'reset') return reset;
      if (fields[i] === 'hashes' && fields[i + 1] !== '') hashes.push(...fields[i + 1].split(' '));
    }
    if (hashes.length > MAX_LISTED_CHANGES) return reset;
    at++;
  }
  if (at === cursor) return reset; // the head moved but no entry follows the cursor
  return { cursor: String(at), hashes, reset: false };
}

/** Index the records an earlier version wrote (it kept no index by hash); once per Redis, resumed if cut off. */
function hashIndex(client: Redis, records: string, byHash: string, schemaName: string): () => Promise<void> {
  let indexed: Promise<void> | null = null;
  const buildIndex = async () => {
    if ((await client.get(schemaName)) === SCHEMA) return;
    let cursor = '0';
    do {
      const [next, flat] = await client.hscan(records, cursor, 'COUNT', 1000);
      const pairs: string[] = [];
      for (let i = 1; i < flat.length; i += 2) pairs.push(toRecord(flat[i]).hash, flat[i - 1]);
      if (pairs.length > 0) await client.hset(byHash, ...pairs);
      cursor = next;
    } while (cursor !== '0');
    await client.set(schemaName, SCHEMA);
  };
  return () =>
    (indexed ??= buildIndex().catch((err: unknown) => {
      indexed = null;
      throw err;
    }));
}

/** A key store on Redis. Commands fail fast while Redis is unreachable (KeyDirectory keeps its cache). */
export function createRedisKeyStore(opts: RedisKeyStoreOptions): KeyStore & { ready(timeoutMs?: number): Promise<void> } {
  if (!opts.client && !opts.url) throw new Error('createRedisKeyStore needs a url or a client');
  const owned = !opts.client;
  const client = opts.client ?? createRedisClient(opts.url!, opts);
  const prefix = opts.keyPrefix ?? 'vls:';
  const names = { records: `${prefix}keys`, byHash: `${prefix}keys:by-hash`, seq: `${prefix}keys:version`, feed: `${prefix}keys:changes` };
  const schemaName = `${prefix}keys:schema`;
  const writeKeys = [names.records, names.byHash, names.seq, names.feed] as const;
  const scripts = { vlsKeyCreate: CREATE_LUA, vlsKeyStatus: STATUS_LUA, vlsKeyLimits: LIMITS_LUA, vlsKeyLookup: LOOKUP_LUA, vlsKeyFeed: FEED_LUA };
  for (const [name, lua] of Object.entries(scripts)) client.defineCommand(name, { lua });
  const script = (name: keyof typeof scripts): Script => (client as unknown as Record<string, Script>)[name].bind(client);
  const [createScript, statusScript, limitsScript, lookupScript, feedScript] = (Object.keys(scripts) as Array<keyof typeof scripts>).map(script);
  const write = (s: Script, ...args: Array<string | number>) => s(4, ...writeKeys, MAX_LISTED_CHANGES, FEED_RETAINED, ...args);

  const ensureIndex = hashIndex(client, names.records, names.byHash, schemaName);

  async function createMany(inputs: readonly NewKey[]) {
    const created = inputs.map(newKeyRecord);
    if (created.length === 0) return created;
    await ensureIndex();
    const args = created.flatMap(({ record }) => [record.id, record.hash, JSON.stringify({ ...record, updatedAt: record.createdAt })]);
    if ((await write(createScript, ...args)) !== 1) throw new Error('a generated key id or key is already in use: nothing created');
    return created;
  }

  return {
    async create(input: NewKey) {
      return (await createMany([input]))[0];
    },
    createMany,
    async list() {
      const all = (await client.hvals(names.records)).map(toRecord);
      return all.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    async get(id) {
      const raw = await traced('HGET', redisAttributes(client, 'HGET'), () => client.hget(names.records, id));
      return raw === null ? null : toRecord(raw);
    },
    async findByHash(hash) {
      await ensureIndex();
      const raw = (await traced('EVALSHA', redisAttributes(client, 'EVALSHA'), () => lookupScript(2, names.records, names.byHash, hash))) as string | null;
      return raw === null ? null : toRecord(raw);
    },
    async isEmpty() {
      return (await client.exists(names.records)) === 0;
    },
    async setStatus(id: string, status: KeyStatus) {
      return (await write(statusScript, id, status, new Date().toISOString())) === 1;
    },
    async updateLimits(id: string, limits: Partial<KeyLimits>) {
      const patch: Partial<KeyLimits> = {};
      for (const k of ['perMinute', 'perDay', 'perMonth', 'smtpPerDay'] as const) if (limits[k] !== undefined) patch[k] = limits[k];
      if (Object.keys(patch).length === 0) return (await client.hexists(names.records, id)) === 1;
      return (await write(limitsScript, id, JSON.stringify(patch), new Date().toISOString())) === 1;
    },
    async changes(cursor) {
      const from = cursor === null ? NaN : Number(cursor);
      const valid = Number.isSafeInteger(from) && from >= 0;
      const [head, entries] = (await feedScript(2, names.seq, names.feed, valid ? from : 0, FEED_BATCH)) as [number, StreamEntry[]?];
      if (!valid || head < from) return { cursor: String(head), hashes: [], reset: true }; // first call, or Redis started afresh
      if (head === from) return { cursor: String(head), hashes: [], reset: false };
      return readFeed(from, head, entries ?? []);
    },
    ready: (timeoutMs) => waitForReady(client, timeoutMs),
    async close() {
      if (owned) await closeClient(client);
    },
  };
}

/** Connect and wait until Redis answers (for the keys CLI and start-up); throws when it does not within timeoutMs. */
export async function openRedisKeyStore(opts: RedisKeyStoreOptions & { readyTimeoutMs?: number }): Promise<KeyStore> {
  const store = createRedisKeyStore(opts);
  try {
    await store.ready(opts.readyTimeoutMs ?? 5000);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
