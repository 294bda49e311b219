// Composition root: config -> adapters -> operations -> app dependencies. The one place that knows every adapter.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyStore } from './adapters/keys/key-store.js';
import type { CounterStore } from './adapters/limits/counter-store.js';
import { createSqliteCounters, type PersistOptions } from './adapters/limits/sqlite-counters.js';
import type { WriteStatus } from './adapters/limits/write-health.js';
import { createSqliteKeyStore } from './adapters/keys/sqlite-key-store.js';
import { openDatabase } from './adapters/sqlite/database.js';
import { createLimiter } from './accounts/limiter.js';
import type { AppDeps } from './app.js';
import { ConfigError } from './errors.js';
import { type Config } from './config.js';
import { KeyDirectory } from './accounts/key-directory.js';
import { loadDocsPage, type DocsPage } from './adapters/files/docs-page.js';
import { createContractValidator } from './http/contract-validator.js';
import { unlimited, type Limiter } from './accounts/limits.js';
import cluster from 'node:cluster';
import { createClusterCounters } from './adapters/limits/cluster-counters.js';
import type { Logger } from './http/logging.js';
import { createMetrics } from './http/metrics.js';
import { loadSpec, projectPath } from './http/spec.js';
import { loadBankDirectory } from './adapters/bank-data/bank-directory.js';
import { createDatasetRegistry, loadDatasets, STATE_VALUE, warnStaleDatasets } from './adapters/files/datasets.js';
import { loadBinTable } from './adapters/bank-data/bin-table.js';
import { createDnsResolver, resolveServerNames, systemDnsServers, type DnsServer } from './adapters/dns/resolver.js';
import { EMAIL_LIST_FILES, loadEmailLists } from './adapters/mail/email-lists.js';
import { loadHostingAsns } from './adapters/ip-data/hosting-asns.js';
import { createIpSecurity, loadHostingRanges, loadTorExits } from './adapters/ip-data/ip-lists.js';
import { createReloader, type Reloadable, type Reloader } from './adapters/files/reload.js';
import { createStrengthEstimator } from './adapters/password/pool.js';
import { createRangeClient } from './adapters/password/range-client.js';
import { resolverLookup } from './adapters/dns/lookup.js';
import { loadNamedFile, readCaBundle, requireDirectory } from './adapters/files/startup-files.js';
import { GeoDatabaseError, openGeoIp, UNAVAILABLE_GEOIP, type GeoIp } from './adapters/geoip/geoip-reader.js';
import { createTlsProber, type TlsProber } from './adapters/tls/prober.js';
import { addressResolver } from './adapters/tls/target-guard.js';
import { createMtaStsFetcher } from './adapters/mail/mta-sts-fetch.js';
import { createMailboxVerifier, type MailboxVerifier } from './adapters/smtp/mailbox-verifier.js';
import { createEmailClassifier } from './domain/email.js';
import { createMailSecurity } from './adapters/mail/mail-security.js';
import { createAccountOperations } from './operations/account.js';
import { createBankingOperations } from './operations/banking.js';
import { createEmailOperations } from './operations/email.js';
import { createBulkOperations } from './operations/bulk.js';
import { createNetworkOperations } from './operations/network.js';
import { createSecurityOperations } from './operations/security.js';
import type { Handlers } from './operations/types.js';
import { startTracing } from './adapters/tracing/sdk.js';

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
  /** Reload every dataset read from files (SIGHUP): src/adapters/files/reload.ts. */
  reloader: Reloader;
  /** Settles when the GeoIP databases are open (or failed to open). */
  geoLoading: Promise<void>;
  keyStore: KeyStore;
  keys: KeyDirectory;
  /** The server listens: build what was deferred past the start-up (the TLS trust store and contexts). */
  listening(): void;
  /** Set when shutdown begins. */
  beginDrain(): void;
  close(): Promise<void>;
}

export interface ComposeOptions {
  /** Replace the limiter (tests of other behaviour use `unlimited`). */
  limiter?: Limiter;
  /** Replacement handlers (tests inject a throwing handler). */
  handlers?: Partial<Record<keyof Handlers, (...args: any[]) => unknown>>;
  defaultMetrics?: boolean;
  /** Minimum time between two /metrics renders (default METRICS_RENDER_INTERVAL_MS); tests reading fresh counts use 0. */
  metricsRenderIntervalMs?: number;
  /** The embedded store's write timing (flush interval, back-off, degraded threshold): tests shorten them. */
  store?: Pick<PersistOptions, 'flushMs' | 'maxRetryMs' | 'degradedAfterMs' | 'closeTimeoutMs'>;
  /** The OTEL_* variables tracing reads (default process.env): tests point them at their own receiver. */
  tracingEnv?: Readonly<Record<string, string | undefined>>;
}

export async function compose(config: Readonly<Config>, logger: Logger, opts: ComposeOptions = {}): Promise<Composition> {
  // The GeoIP files (~75 MB for GeoLite2) are read from the start, so that the reads overlap the start-up's CPU work;
  // the outcome is taken further down (marked handled here: a failure is reported there, not as an unhandled rejection).
  const geoOpen = geoPaths(config).then(openGeoIp);
  geoOpen.catch(() => undefined);
  const spec = await loadSpec();
  // Off (nothing registered) unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER asks for traces.
  const tracing = await startTracing(opts.tracingEnv ?? process.env, String(spec.document.info?.version ?? 'unknown'));
  if (tracing) logger.info({ exporter: (opts.tracingEnv ?? process.env).OTEL_TRACES_EXPORTER ?? 'otlp' }, 'tracing on');
  const metrics = createMetrics({ defaults: opts.defaultMetrics, renderIntervalMs: opts.metricsRenderIntervalMs });

  let keyStore: KeyStore;
  let counters: CounterStore;
  let writeStatus: (() => WriteStatus) | null = null;
  if (config.redisUrl) {
    // Imported only in Redis mode: ioredis costs ~0.1 s of start-up that the embedded store does not need.
    const [{ createRedisKeyStore }, { createRedisCounters }] = await Promise.all([import('./adapters/keys/redis-key-store.js'), import('./adapters/limits/redis-counters.js')]);
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
    // WORKERS>1: the primary counts for every worker (src/adapters/limits/cluster-counters.ts).
    if (cluster.isWorker) counters = createClusterCounters();
    else {
      const sqlite = createSqliteCounters({ db, logger, ...opts.store });
      writeStatus = sqlite.writeStatus;
      counters = sqlite;
    }
  }
  if (writeStatus) {
    const status = writeStatus;
    metrics.addGauge('store_last_write_age_seconds', 'Seconds since the embedded store last took a write of the usage counters', 'store', () => ({ sqlite: status().lastWriteAgeSeconds }));
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
  // Datasets read from files (docs/data-sources.md): read once here, never per request, and again on a reload, which
  // builds each new copy beside the one in use and swaps it in with one assignment (requests read them once each).
  const binPath = config.binDataFile ?? projectPath('data/bin/ranges.csv');
  const loadBin = async () => {
    const table = await loadBinTable(binPath);
    // A file without one usable row would leave every card without issuer data while the server looks ready.
    if (table.size === 0) throw new ConfigError('BIN_DATA_FILE', `${binPath} holds no BIN range (a CSV with an iin_start column)`);
    return table;
  };
  let bin = await loadNamedFile('BIN_DATA_FILE', binPath, loadBin);
  logger.info({ entries: bin.size }, 'BIN table loaded');
  const banksDir = projectPath('data/banks');
  let banks = await loadBankDirectory(banksDir);
  const datasetsPath = projectPath('data/datasets.json');
  const datasets = createDatasetRegistry(await loadDatasets(datasetsPath));
  const hostingPath = config.hostingRangesFile ?? projectPath('data/ip/hosting-ranges.csv');
  const torPath = config.torExitFile ?? projectPath('data/ip/tor-exits.txt');
  const asnPath = config.hostingAsnFile ?? projectPath('data/ip/hosting-asns.txt');
  const ipList = <T>(variable: string, path: string, load: (p: string) => Promise<T>) =>
    loadNamedFile(variable, path, load).catch((err: unknown) => {
      throw err instanceof ConfigError ? err : new ConfigError(variable, err instanceof Error ? err.message : String(err));
    });
  let hosting = await ipList('HOSTING_RANGES_FILE', hostingPath, loadHostingRanges);
  let tor = await ipList('TOR_EXIT_FILE', torPath, loadTorExits);
  let asns = await ipList('HOSTING_ASN_FILE', asnPath, loadHostingAsns);
  let ipSecurity = createIpSecurity(hosting, tor, asns);
  const dateIpLists = () => {
    datasets.setDate('ip-hosting', hosting.date);
    datasets.setDate('ip-tor-exits', tor.date);
    datasets.setDate('ip-hosting-asns', asns.date);
  };
  dateIpLists();
  logger.info({ hosting: { entries: hosting.entries, ranges: hosting.table.size }, tor: { entries: tor.entries, ranges: tor.table.size }, asns: asns.asns.length }, 'hosting, Tor and hosting ASN lists loaded');
  warnStaleDatasets(logger, datasets.statuses());
  metrics.addGauge('dataset_state', 'Shipped datasets: 0 fresh, 1 aged (past its maximum age), 2 expired (past its validity)', 'dataset', () => Object.fromEntries(datasets.statuses().map((s) => [s.name, STATE_VALUE[s.state]])));
  metrics.addGauge('dataset_age_days', 'Age in days of each shipped dataset', 'dataset', () => Object.fromEntries(datasets.statuses().map((s) => [s.name, s.ageDays])));
  const resolver = createDnsResolver({
    servers: config.dnsServers ? await namedServers(config.dnsServers) : systemDnsServers(),
    timeoutMs: config.dnsTimeoutMs,
    logger,
  });
  metrics.addCache('dns', () => resolver.stats());
  let email = createEmailClassifier(await loadEmailLists());
  const tlsExtraCa = config.tlsExtraCaFile ? await readCaBundle('TLS_EXTRA_CA_FILE', config.tlsExtraCaFile) : undefined;
  // Built at the first inspection or once the server listens (listening() below), whichever comes first: its trust
  // store and TLS contexts (~0.1-0.2 s of CPU, no file read: TLS_EXTRA_CA_FILE was read and checked above) are not
  // needed by the start-up.
  let tlsProber: TlsProber | null = null;
  const tlsNow = () =>
    (tlsProber ??= createTlsProber({
      resolve: addressResolver(resolver),
      port: config.tlsInspectPort,
      timeoutMs: config.tlsTimeoutMs,
      extraCaPem: tlsExtraCa,
      allowPrivate: config.allowPrivateTargets,
    }));
  const tls: TlsProber = {
    inspect: (domain) => tlsNow().inspect(domain),
    stats: () => tlsProber?.stats() ?? { cacheEntries: 0, cacheHits: 0, cacheMisses: 0, connections: 0 },
  };
  // MTA-STS policies are fetched under the TLS inspection's guard, port, timeout and trust anchors.
  // Built like the TLS prober: at its first use or once the server listens (it parses the same trust store).
  let mtaStsFetcher: ReturnType<typeof createMtaStsFetcher> | null = null;
  const mtaStsNow = () =>
    (mtaStsFetcher ??= createMtaStsFetcher({ resolve: addressResolver(resolver), port: config.tlsInspectPort, timeoutMs: config.tlsTimeoutMs, extraCaPem: tlsExtraCa, allowPrivate: config.allowPrivateTargets }));
  const fetchMtaStsPolicy = (domain: string) => mtaStsNow()(domain);
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
  const dateGeo = (g: GeoIp) => {
    const built = g.databases.map((d) => d.buildDate.slice(0, 10)).sort()[0];
    if (built) datasets.setDate('geolite2', built);
  };
  const opening = geoOpen.then(
    (g) => {
      geo = g;
      logger.info({ databases: g.databases }, 'GeoIP databases open');
      dateGeo(g);
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

  // The 2.6 MB Redoc page, read once in the background and served from memory; its gzip and br encodings are made at
  // the first /docs request (sent uncompressed until they exist). Made at start they cost 0.2-0.4 s of CPU, and
  // their working memory stayed resident: +15-17 MB RSS measured, for a page most processes never serve.
  let docsPage: DocsPage | null = null;
  let compressDocs!: () => void;
  const compressWhen = new Promise<void>((resolve) => (compressDocs = resolve));
  loadDocsPage(projectPath('dist/docs/index.html'), (page) => (docsPage = page), { compressWhen }).catch((err: unknown) =>
    docsPage === null
      ? logger.warn('documentation page not built (make docs): /docs answers 503')
      : logger.warn({ err: String(err) }, 'documentation page not compressed: /docs sends it uncompressed'),
  );

  // SMTP mailbox verification (SMTP_CHECK=on): one verifier, so that its per-host session limit and its verdict cache
  // are shared by single requests and bulk items alike.
  const verifier: MailboxVerifier | null = config.smtpCheck
    ? createMailboxVerifier({
        resolver,
        allowPrivate: config.allowPrivateTargets,
        port: config.smtpPort,
        heloName: config.smtpHeloName!,
        mailFrom: config.smtpMailFrom!,
        timeoutMs: config.smtpTimeoutMs,
        maxPerHost: config.smtpMaxPerHost,
        proxy: config.smtpProxy,
        logger,
      })
    : null;
  if (verifier) {
    const v = verifier;
    metrics.addCache('smtp_verdicts', () => {
      const s = v.stats();
      return { hits: s.cacheHits, misses: s.cacheMisses, size: s.cacheEntries };
    });
    metrics.addCounter('smtp_sessions_total', 'SMTP sessions opened for mailbox verification', () => v.stats().sessions);
  }

  // One handler per operationId of openapi.yaml, checked complete at compile time.
  const handlers = {
    ...createBankingOperations({ banks: () => banks }),
    ...createNetworkOperations({
      resolver,
      mailSecurity: createMailSecurity(resolver, fetchMtaStsPolicy),
      allowSpecialUse: config.allowPrivateTargets,
      tls,
      geo: () => geo,
      security: () => ipSecurity,
      trustProxy: config.trustProxy,
    }),
    ...createSecurityOperations({ estimator, ranges, bin: () => bin }),
    validateEmail: createEmailOperations({ resolver, email: () => email, allowSpecialUse: config.allowPrivateTargets, verifier }).validateEmail,
    ...createAccountOperations({ limiter }),
    ...createBulkOperations({
      document: spec.document,
      maxItems: config.bulkMaxItems,
      banking: { banks: () => banks },
      email: { resolver, email: () => email, allowSpecialUse: config.allowPrivateTargets, verifier },
    }),
  } satisfies Handlers;

  // SIGHUP (src/main.ts): every file dataset again. The GeoIP databases are reopened from the same paths (a failure keeps
  // the ones open; databases that failed at start are tried again); the dates /readyz shows follow each swap.
  let geoPathsNow: { cityDb: string; asnDb: string } | null = null; // the paths of the last reload
  const reloadables: Reloadable[] = [
    {
      name: 'geolite2',
      file: () => Object.values(geoPathsNow ?? {}).join(', ') || 'the GeoIP databases',
      async reload() {
        geoPathsNow = await geoPaths(config);
        const g = await openGeoIp(geoPathsNow);
        geo = g;
        dateGeo(g);
      },
    },
    { name: 'bin-ranges', file: () => binPath, reload: async () => void (bin = await loadBin()) },
    { name: 'bank-codes-national', file: () => banksDir, reload: async () => void (banks = await loadBankDirectory(banksDir)) },
    {
      name: 'email-lists',
      file: () => Object.values(EMAIL_LIST_FILES).join(', '),
      reload: async () => void (email = createEmailClassifier(await loadEmailLists())),
    },
    {
      name: 'ip-hosting',
      file: () => hostingPath,
      async reload() {
        hosting = await loadHostingRanges(hostingPath);
        ipSecurity = createIpSecurity(hosting, tor, asns);
      },
    },
    {
      name: 'ip-tor-exits',
      file: () => torPath,
      async reload() {
        tor = await loadTorExits(torPath);
        ipSecurity = createIpSecurity(hosting, tor, asns);
      },
    },
    {
      name: 'ip-hosting-asns',
      file: () => asnPath,
      async reload() {
        asns = await loadHostingAsns(asnPath);
        ipSecurity = createIpSecurity(hosting, tor, asns);
      },
    },
    { name: 'datasets', file: () => datasetsPath, reload: async () => datasets.replaceRecords(await loadDatasets(datasetsPath)) },
  ];
  const reloader = createReloader(reloadables, logger, dateIpLists);
  metrics.addCounters('dataset_reloads_total', 'Reloads of a file dataset that succeeded (SIGHUP)', 'dataset', () => reloader.counts().reloads);
  metrics.addCounters('dataset_reload_failures_total', 'Reloads of a file dataset that failed and kept the data loaded before', 'dataset', () => reloader.counts().failures);

  let draining = false;
  const readiness = () => ({ keys: keys.loaded && keys.healthy, limits: limiter.healthy(), geoip: geo?.ready === true });
  metrics.addGauge('readiness_check', 'The checks GET /readyz makes: 1 passing, 0 failing', 'check', () => {
    const r = readiness();
    return { keys: Number(r.keys), limits: Number(r.limits), geoip: Number(r.geoip) };
  });
  const deps: AppDeps = {
    handlers: { ...handlers, ...opts.handlers } as Handlers,
    keys,
    limiter,
    logger,
    metrics,
    tracer: tracing?.tracer,
    draining: () => draining,
    bulkMaxItems: config.bulkMaxItems,
    responseCheck: config.validateResponses ? createContractValidator(spec.document) : undefined,
    spec,
    docsPage: () => {
      compressDocs();
      return docsPage;
    },
    readiness,
    // Still ready (counting goes on in memory), but told: the counts wait in memory until the lock is free.
    degraded: (): Record<string, string> => {
      const s = writeStatus?.();
      return s?.degraded ? { store: `usage counters not written for ${Math.round(s.failingForSeconds ?? 0)} s: another process holds DATA_DIR/service.db's write lock; counts are kept in memory` } : {};
    },
    datasets: () => datasets.statuses(),
  };
  return {
    deps,
    reloader,
    geoLoading,
    keyStore,
    keys,
    listening: () => {
      // One at a time, each its own turn of the event loop (each is ~0.1 s of CPU).
      setImmediate(() => {
        tlsNow();
        setImmediate(mtaStsNow);
      });
    },
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
      await tracing?.shutdown();
    },
  };
}
