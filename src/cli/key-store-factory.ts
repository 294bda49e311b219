// Opens the key store the server uses: SQLite under DATA_DIR (Redis when REDIS_URL is set, see issue 7).
import type { KeyStore } from '../adapters/key-store.js';
import { createSqliteKeyStore, openDatabase } from '../adapters/sqlite-key-store.js';
import type { Config } from '../config.js';

export async function openKeyStore(config: Pick<Config, 'dataDir' | 'redisUrl'>): Promise<KeyStore> {
  return createSqliteKeyStore(openDatabase(config.dataDir));
}
