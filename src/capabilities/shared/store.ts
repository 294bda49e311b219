// The shared store: API keys and usage counters (Redis when REDIS_URL is set, else the embedded SQLite database, the
// primary counting for every worker when WORKERS>1), the key directory and the limiter over the counters.
import cluster from 'node:cluster';
import { createLimiter } from '../../accounts/limiter.js';
import { KeyDirectory } from '../../accounts/key-directory.js';
import { unlimited, type Limiter } from '../../accounts/limits.js';
import type { KeyStore } from '../../adapters/keys/key-store.js';
import { createSqliteKeyStore } from '../../adapters/keys/sqlite-key-store.js';
import { createClusterCounters } from '../../adapters/limits/cluster-counters.js';
import type { CounterStore } from '../../adapters/limits/counter-store.js';
import { createSqliteCounters, type PersistOptions } from '../../adapters/limits/sqlite-counters.js';
import type { WriteStatus } from '../../adapters/limits/write-health.js';
import { openDatabase } from '../../adapters/sqlite/database.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../http/logging.js';
import type { Metrics } from '../../http/metrics.js';

export type StoreOptions = Pick<PersistOptions, 'flushMs' | 'maxRetryMs' | 'degradedAfterMs' | 'closeTimeoutMs'>;

export interface Store {
  keyStore: KeyStore;
  keys: KeyDirectory;
  limiter: Limiter;
  /** Named problems that leave the service ready but should be told (/readyz "degraded"). */
  degraded(): Record<string, string>;
  close(): Promise<void>;
}

interface Stores {
  keyStore: KeyStore;
  counters: CounterStore;
  writeStatus: (() => WriteStatus) | null;
}

async function redisStores(url: string, logger: Logger): Promise<Stores> {
  // Imported only in Redis mode: ioredis costs ~0.1 s of start-up that the embedded store does not need.
  const [{ createRedisKeyStore }, { createRedisCounters }] = await Promise.all([import('../../adapters/keys/redis-key-store.js'), import('../../adapters/limits/redis-counters.js')]);
  const onError = (err: Error) => logger.debug({ err: err.message }, 'redis connection error');
  const keyStore = createRedisKeyStore({ url, onError });
  const counters = createRedisCounters({ url, logger, onError });
  await Promise.all([keyStore.ready(5000), counters.ready(5000)]).catch((err) =>
    logger.warn({ err: String(err) }, 'redis not reachable at start: serving degraded until it is'),
  );
  return { keyStore, counters, writeStatus: null };
}

function embeddedStores(dataDir: string, logger: Logger, opts: StoreOptions): Stores {
  const db = openDatabase(dataDir);
  const keyStore = createSqliteKeyStore(db);
  // WORKERS>1: the primary counts for every worker (src/adapters/limits/cluster-counters.ts).
  if (cluster.isWorker) return { keyStore, counters: createClusterCounters(), writeStatus: null };
  const sqlite = createSqliteCounters({ db, logger, ...opts });
  return { keyStore, counters: sqlite, writeStatus: sqlite.writeStatus };
}

function storeMetrics(metrics: Metrics, { counters, writeStatus }: Stores): void {
  if (writeStatus) metrics.addGauge('store_last_write_age_seconds', 'Seconds since the embedded store last took a write of the usage counters', 'store', () => ({ sqlite: writeStatus().lastWriteAgeSeconds }));
  const countedAlone = counters.countedAlone;
  if (countedAlone) {
    metrics.addCounter('limits_counted_alone_total', 'Requests this process counted alone because Redis did not answer (limits held per process meanwhile)', () => countedAlone());
  }
}

type StoreConfig = Pick<Config, 'redisUrl' | 'dataDir' | 'rateLimits' | 'rateLimitPerMinute' | 'quotaPerDay' | 'quotaPerMonth' | 'smtpDailyPerKey'>;

export async function openStore(config: StoreConfig, logger: Logger, metrics: Metrics, opts: { limiter?: Limiter; store?: StoreOptions }): Promise<Store> {
  const stores = config.redisUrl ? await redisStores(config.redisUrl, logger) : embeddedStores(config.dataDir, logger, opts.store ?? {});
  const { keyStore, counters, writeStatus } = stores;
  const keys = new KeyDirectory({ store: keyStore, onError: (err) => logger.warn({ err: String(err) }, 'key store unreachable') });
  await keys.refresh();
  keys.start();
  metrics.addCache('api_keys', () => keys.stats());
  const defaults = { perMinute: config.rateLimitPerMinute, perDay: config.quotaPerDay, perMonth: config.quotaPerMonth };
  const limiter = opts.limiter ?? (config.rateLimits ? createLimiter({ defaults, smtpPerDay: config.smtpDailyPerKey, counters }) : unlimited);
  storeMetrics(metrics, stores);
  return {
    keyStore,
    keys,
    limiter,
    // Still ready (counting goes on in memory), but told: the counts wait in memory until the lock is free.
    degraded: (): Record<string, string> => {
      const s = writeStatus?.();
      return s?.degraded ? { store: `usage counters not written for ${Math.round(s.failingForSeconds ?? 0)} s: another process holds DATA_DIR/service.db's write lock; counts are kept in memory` } : {};
    },
    async close() {
      keys.stop();
      // The limiter's last flush needs the database still open: limiter, counters, then the key store.
      await limiter.close(); // closes the counters it was built on
      if (limiter === unlimited || opts.limiter) await counters.close();
      await keyStore.close();
    },
  };
}
