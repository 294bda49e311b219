// API key store on Redis (REDIS_URL): one hash of JSON records plus a version counter INCR'd on every change.
//
// Layout (prefix default `vls:`): `vls:keys` hash, field = key id, value = JSON KeyRecord (+ updatedAt);
// `vls:keys:version` integer, INCR'd by every create/status/limits change (KeyDirectory polls it).
// Every change is one Lua script: read-modify-write is atomic across the CLI and all instances.
// Redis must persist its data (RDB or AOF) in production: a Redis that restarts empty forgets every key.
import type { Redis } from 'ioredis';
import {
  newKeyRecord,
  type KeyLimits,
  type KeyRecord,
  type KeyStatus,
  type KeyStore,
  type NewKey,
} from './key-store.js';
import { closeClient, createRedisClient, waitForReady, type RedisClientOptions } from './redis-client.js';

/** KEYS: hash, version; ARGV: id, json. */
const CREATE_LUA = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('INCR', KEYS[2])
return 1
`;

/** KEYS: hash, version; ARGV: id, status, updatedAt. Revocation is final. */
const STATUS_LUA = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local r = cjson.decode(raw)
if r.status == 'revoked' and ARGV[2] ~= 'revoked' then return 0 end
r.status = ARGV[2]
r.updatedAt = ARGV[3]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(r))
redis.call('INCR', KEYS[2])
return 1
`;

/** KEYS: hash, version; ARGV: id, JSON patch of limits (null = back to the default), updatedAt. */
const LIMITS_LUA = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local r = cjson.decode(raw)
for k, v in pairs(cjson.decode(ARGV[2])) do r[k] = v end
r.updatedAt = ARGV[3]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(r))
redis.call('INCR', KEYS[2])
return 1
`;

export interface RedisKeyStoreOptions extends RedisClientOptions {
  /** REDIS_URL; ignored when `client` is given. */
  url?: string;
  /** An existing client (not closed by close()). */
  client?: Redis;
  /** Prefix of every Redis key; default `vls:`. */
  keyPrefix?: string;
}

type Script = (numKeys: number, ...args: string[]) => Promise<number>;

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
    createdAt: String(r.createdAt),
  };
}

/** A key store on Redis. Commands fail fast while Redis is unreachable (KeyDirectory keeps its cache). */
export function createRedisKeyStore(opts: RedisKeyStoreOptions): KeyStore & { ready(timeoutMs?: number): Promise<void> } {
  if (!opts.client && !opts.url) throw new Error('createRedisKeyStore needs a url or a client');
  const owned = !opts.client;
  const client = opts.client ?? createRedisClient(opts.url!, opts);
  const prefix = opts.keyPrefix ?? 'vls:';
  const hashName = `${prefix}keys`;
  const versionName = `${prefix}keys:version`;
  client.defineCommand('vlsKeyCreate', { lua: CREATE_LUA });
  client.defineCommand('vlsKeyStatus', { lua: STATUS_LUA });
  client.defineCommand('vlsKeyLimits', { lua: LIMITS_LUA });
  const script = (name: string): Script => {
    const fn = (client as unknown as Record<string, Script>)[name].bind(client);
    return fn;
  };
  const [createScript, statusScript, limitsScript] = ['vlsKeyCreate', 'vlsKeyStatus', 'vlsKeyLimits'].map(script);

  return {
    async create(input: NewKey) {
      const { record, key } = newKeyRecord(input);
      const json = JSON.stringify({ ...record, updatedAt: record.createdAt });
      if ((await createScript(2, hashName, versionName, record.id, json)) !== 1) throw new Error(`key id ${record.id} already exists`);
      return { record, key };
    },
    async list() {
      const all = (await client.hvals(hashName)).map(toRecord);
      return all.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    async get(id) {
      const raw = await client.hget(hashName, id);
      return raw === null ? null : toRecord(raw);
    },
    async setStatus(id: string, status: KeyStatus) {
      return (await statusScript(2, hashName, versionName, id, status, new Date().toISOString())) === 1;
    },
    async updateLimits(id: string, limits: Partial<KeyLimits>) {
      const patch: Partial<KeyLimits> = {};
      for (const k of ['perMinute', 'perDay', 'perMonth'] as const) if (limits[k] !== undefined) patch[k] = limits[k];
      if (Object.keys(patch).length === 0) return (await client.hexists(hashName, id)) === 1;
      return (await limitsScript(2, hashName, versionName, id, JSON.stringify(patch), new Date().toISOString())) === 1;
    },
    async version() {
      return (await client.get(versionName)) ?? '0';
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
