// Opens the key store the server and the keys CLI use: Redis when REDIS_URL is set, else SQLite under DATA_DIR.
import type { KeyStore } from '../adapters/keys/key-store.js';
import { createSqliteKeyStore } from '../adapters/keys/sqlite-key-store.js';
import { openDatabase } from '../adapters/sqlite/database.js';
import type { Config } from '../config.js';

/** With REDIS_URL, waits until Redis answers (throws after readyTimeoutMs, default 5 s). */
export async function openKeyStore(
  config: Pick<Config, 'dataDir' | 'redisUrl'>,
  opts: { readyTimeoutMs?: number; commandTimeoutMs?: number } = {},
): Promise<KeyStore> {
  // Imported only with REDIS_URL: ioredis costs ~0.1 s of start-up that the embedded store does not need.
  if (config.redisUrl) return (await import('../adapters/keys/redis-key-store.js')).openRedisKeyStore({ url: config.redisUrl, ...opts });
  return createSqliteKeyStore(openDatabase(config.dataDir));
}
