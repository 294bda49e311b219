// Composition root: config -> adapters -> operations -> app dependencies. The one place that knows every adapter.
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyStore } from './adapters/key-store.js';
import type { CounterStore } from './adapters/counter-store.js';
import { createRedisCounters } from './adapters/redis-counters.js';
import { createRedisKeyStore } from './adapters/redis-key-store.js';
import { createSqliteCounters } from './adapters/sqlite-counters.js';
import { createSqliteKeyStore, openDatabase } from './adapters/sqlite-key-store.js';
import { createLimiter } from './http/rate-limiter.js';
import { createUsageOperations } from './operations/usage.js';
import type { AppDeps } from './app.js';
import { ConfigError, type Config } from './config.js';
import { KeyDirectory } from './accounts/key-directory.js';
import type { DocsPage } from './http/system-routes.js';
import { createContractValidator } from './http/contract-validator.js';
import { unlimited, type Limiter } from './http/limits.js';
import type { Logger } from './http/logging.js';
import { createMetrics } from './http/metrics.js';
import { compileApi } from './http/request-validation.js';
import { loadSpec, projectPath } from './http/spec.js';
import type { HandlerMap } from './http/types.js';
import { resolveBic } from './adapters/bank-directory.js';
import { loadBinTable } from './adapters/bin-table.js';
import { createDnsResolver, resolveServerNames, systemDnsServers, type DnsServer } from './adapters/dns-resolver.js';
import { loadEmailLists } from './adapters/email-lists.js';
import { createStrengthEstimator } from './adapters/password-pool.js';
import { createRangeClient } from './adapters/range-client.js';
import { resolverLookup } from './adapters/dns-lookup.js';
import { loadNamedFile, readCaBundle, requireDirectory } from './adapters/startup-files.js';
import { GeoDatabaseError, openGeoIp, UNAVAILABLE_GEOIP, type GeoIp } from './adapters/geoip-reader.js';
import { addressResolver, createTlsProber } from './adapters/tls-prober.js';
import { createEmailClassifier } from './domain/email.js';
import { createBicOperations } from './operations/bic.js';
import { createDnsEmailOperations } from './operations/dns-email.js';
import { createIbanCardOperations } from './operations/iban-card.js';
import { createPasswordOperations } from './operations/password.js';
import { createTlsIpOperations } from './operations/tls-ip.js';

/** The configured GeoIP databases, or the bundled GeoLite2 ones under DATA_DIR/geoip (newest City first). */
async function geoPaths(config: Readonly<Config>): Promise<{ cityDb: string; asnDb: string }> {
  const dir = join(config.dataDir, 'geoip');
  const exists = (p: string) => access(p).then(() => true, () => false);
  const latest = join(dir, 'GeoLite2-City.latest.mmdb');
  const bundledCity = (await exists(latest)) ? latest : join(dir, 'GeoLite2-City.mmdb');
  return { cityDb: config.geoipCityDb ?? bundledCity, asnDb: config.geoipAsnDb ?? join(dir, 'GeoLite2-ASN.mmdb') };
}

/** DNS_SERVERS with host names looked up; one that does not resolve stops the boot naming the variable. */
async function namedServers(servers: DnsServer[]): Promise<DnsServer[]> {
  return resolveServerNames(servers).catch((err: Error) => {
    throw new ConfigError('DNS_SERVERS', err.message);
  });
}

export interface Composition {
  deps: AppDeps;
  /** Settles when the GeoIP databases are open (or failed to open). */
  geoLoading: Promise<void>;
  keyStore: KeyStore;
  keys: KeyDirectory;
  /** Set when shutdown begins. */
  beginDrain(): void;
  close(): Promise<void>;
}

export interface ComposeOptions {
  /** Replace the limiter (tests of other behaviour use `unlimited`). */
  limiter?: Limiter;
  /** Extra or replacement handlers (tests inject a throwing handler). */
  handlers?: HandlerMap;
  defaultMetrics?: boolean;
}

export async function compose(config: Readonly<Config>, logger: Logger, opts: ComposeOptions = {}): Promise<Composition> {
  const spec = await loadSpec();
  const api = await compileApi(spec.document);
  const metrics = createMetrics({ defaults: opts.defaultMetrics });

  let keyStore: KeyStore;
  let counters: CounterStore;
  if (config.redisUrl) {
    const onError = (err: Error) => logger.debug({ err: err.message }, 'redis connection error');
    const redisKeys = createRedisKeyStore({ url: config.redisUrl, onError });
    const redisCounters = createRedisCounters({ url: config.redisUrl, logger, onError });
    await Promise.all([redisKeys.ready(5000), redisCounters.ready(5000)]).catch((err) =>
      logger.warn({ err: String(err) }, 'redis not reachable at start: serving degraded until it is'),
    );
    keyStore = redisKeys;
    counters = redisCounters;
  } else {
    const db = openDatabase(config.dataDir);
    keyStore = createSqliteKeyStore(db);
    counters = createSqliteCounters({ db, logger });
  }
  const keys = new KeyDirectory({ store: keyStore, onError: (err) => logger.warn({ err: String(err) }, 'key store unreachable') });
  await keys.refresh();
  keys.start();
  metrics.addCache('api_keys', () => keys.stats());

  const limiter =
    opts.limiter ??
    (config.rateLimits
      ? createLimiter({ defaults: { perMinute: config.rateLimitPerMinute, perDay: config.quotaPerDay, perMonth: config.quotaPerMonth }, counters })
      : unlimited);
  if (counters.countedAlone) {
    const countedAlone = counters.countedAlone;
    metrics.addCounter(
      'limits_counted_alone_total',
      'Requests this process counted alone because Redis did not answer (limits held per process meanwhile)',
      () => countedAlone(),
    );
  }
  const binPath = config.binDataFile ?? projectPath('data/bin/ranges.csv');
  const bin = await loadNamedFile('BIN_DATA_FILE', binPath, loadBinTable);
  // A file without one usable row would leave every card without issuer data while the server looks ready.
  if (bin.size === 0) throw new ConfigError('BIN_DATA_FILE', `${binPath} holds no BIN range (a CSV with an iin_start column)`);
  logger.info({ entries: bin.size }, 'BIN table loaded');
  const resolver = createDnsResolver({
    servers: config.dnsServers ? await namedServers(config.dnsServers) : systemDnsServers(),
    timeoutMs: config.dnsTimeoutMs,
    logger,
  });
  metrics.addCache('dns', () => resolver.stats());
  const email = createEmailClassifier(loadEmailLists());
  const tls = createTlsProber({
    resolve: addressResolver(resolver),
    port: config.tlsInspectPort,
    timeoutMs: config.tlsTimeoutMs,
    extraCaPem: config.tlsExtraCaFile ? await readCaBundle('TLS_EXTRA_CA_FILE', config.tlsExtraCaFile) : undefined,
    allowPrivate: config.allowPrivateTargets,
  });
  metrics.addCache('tls', () => {
    const s = tls.stats();
    return { hits: s.cacheHits, misses: s.cacheMisses, size: s.cacheEntries };
  });
  const estimator = createStrengthEstimator({
    threads: config.passwordThreads,
    minThreads: config.passwordMinThreads,
    extraLanguages: config.passwordExtraLanguages,
  });
  // An absent mirror would answer "not breached" for every password: refuse it rather than mislead.
  if (config.pwnedPasswordsDir) await requireDirectory('PWNED_PASSWORDS_DIR', config.pwnedPasswordsDir);
  const ranges = createRangeClient({
    lookup: resolverLookup(resolver),
    baseUrl: config.pwnedPasswordsUrl,
    timeoutMs: config.pwnedTimeoutMs,
    mirrorDir: config.pwnedPasswordsDir ?? undefined,
    logger,
  });
  metrics.addCache('pwned_ranges', () => ranges.stats());
  // The bundled GeoIP databases load in the background (~0.7 s for GeoLite2): /readyz and the IP endpoints answer 503
  // until then. Databases named by GEOIP_CITY_DB/GEOIP_ASN_DB are awaited: a bad one stops the boot naming it.
  let geo: GeoIp | null = null;
  metrics.addCache('geoip', () => geo?.stats() ?? { hits: 0, misses: 0, size: 0 });
  const opening = openGeoIp(await geoPaths(config)).then(
    (g) => {
      geo = g;
      logger.info({ databases: g.databases }, 'GeoIP databases open');
    },
    (err: unknown) => {
      // A database named in the environment that fails is a configuration error, whatever else failed beside it.
      const failures = err instanceof AggregateError ? (err.errors as unknown[]) : [err];
      for (const f of failures) {
        if (!(f instanceof GeoDatabaseError)) continue;
        const variable = f.kind === 'city' ? 'GEOIP_CITY_DB' : 'GEOIP_ASN_DB';
        if ((f.kind === 'city' ? config.geoipCityDb : config.geoipAsnDb) !== null) throw new ConfigError(variable, f.message);
      }
      geo = UNAVAILABLE_GEOIP;
      logger.error({ err: String(err) }, 'GeoIP databases could not be opened: IP endpoints answer 503 (run make geoip or set GEOIP_CITY_DB/GEOIP_ASN_DB)');
    },
  );
  if (config.geoipCityDb !== null || config.geoipAsnDb !== null) await opening;
  const geoLoading = opening.catch(() => undefined);

  // The 2.6 MB Redoc page is streamed from disk on each visit rather than held in the heap.
  const docsPath = projectPath('dist/docs/index.html');
  let docsPage: DocsPage | null = null;
  stat(docsPath).then(
    (s) => (docsPage = { path: docsPath, size: s.size }),
    () => logger.warn('documentation page not built (make docs): /docs answers 503'),
  );

  const handlers: HandlerMap = {
    ...createBicOperations(),
    ...(createIbanCardOperations({ bin, bicOf: resolveBic }) as HandlerMap),
    ...createDnsEmailOperations({ resolver, email }),
    ...createTlsIpOperations({ tls, geo: () => geo, trustProxy: config.trustProxy }),
    ...createUsageOperations({ limiter }),
    ...createPasswordOperations({ estimator, ranges }),
    ...opts.handlers,
  };

  let draining = false;
  const readiness = () => ({ keys: keys.loaded && keys.healthy, limits: limiter.healthy(), geoip: geo?.ready === true });
  metrics.addGauge('readiness_check', 'The checks GET /readyz makes: 1 passing, 0 failing', 'check', () => {
    const r = readiness();
    return { keys: Number(r.keys), limits: Number(r.limits), geoip: Number(r.geoip) };
  });
  const deps: AppDeps = {
    api,
    handlers,
    keys,
    limiter,
    logger,
    metrics,
    draining: () => draining,
    responseCheck: config.validateResponses ? createContractValidator(spec.document) : undefined,
    spec,
    docsPage: () => docsPage,
    readiness,
  };
  return {
    deps,
    geoLoading,
    keyStore,
    keys,
    beginDrain: () => {
      draining = true;
    },
    async close() {
      keys.stop();
      // The limiter's last flush needs the database still open: limiter, counters, then the key store.
      await estimator.close();
      await limiter.close(); // closes the counters it was built on
      if (limiter === unlimited || opts.limiter) await counters.close();
      await keyStore.close();
    },
  };
}
