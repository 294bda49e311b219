// The server, started by src/main.ts once the Node is known to be supported: config -> composition -> app -> listen;
// WORKERS>1 forks node:cluster workers (each runs main.ts again); SIGTERM/SIGINT drain, exit 0; SIGHUP reloads the file
// datasets (every worker's).
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { startClusterPrimary } from './adapters/limits/cluster-counters.js';
import { openDatabase } from './adapters/sqlite/database.js';
import { openKeyStore } from './cli/key-store-factory.js';
import { compose } from './compose.js';
import { shippedLists } from './capabilities/shared/refresh.js';
import { createDnsResolver, resolveServerNames, systemDnsServers } from './adapters/dns/resolver.js';
import { createDataRefresh } from './adapters/refresh/schedule.js';
import { addressResolver } from './adapters/tls/target-guard.js';
import { ConfigError } from './errors.js';
import { loadConfig, type Config } from './config.js';
import { createLogger } from './http/logging.js';
import { createMetricsApp } from './http/system-routes.js';
import { createHttpServer, drain, listen } from './server.js';
import { boundHeapGrowth, compactHeapAfterBoot, helpersYieldToTheEventLoop } from './heap-tuning.js';
import { availableParallelism } from 'node:os';

/** On first start with an empty key store, create one key and print it once. */
async function ensureFirstKey(config: Readonly<Config>): Promise<void> {
  const store = await openKeyStore(config);
  try {
    if (!(await store.isEmpty())) return;
    const { record, key } = await store.create({ name: 'default' });
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    // precision: on stderr, the terminal's stream; stdout is the JSON log stream (collected, shipped, kept).
    process.stderr.write(
      `\nCreated the first API key (${record.id}); it is shown only this once:\n\n    ${key}\n\n` +
        `Use it in the X-Api-Key header, e.g.:\n    curl -H 'X-Api-Key: ${key}' http://${host}:${config.port}/api/v1/bic/DEUTDEFF\n\n`,
    );
  } finally {
    await store.close();
  }
}

function readConfig(): Readonly<Config> {
  try {
    return loadConfig(process.env, availableParallelism());
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Why a port could not be opened, as a ConfigError naming the port's variable or HOST where one of them is the cause. */
function listenFailure(err: NodeJS.ErrnoException, config: Readonly<Config>, variable: 'PORT' | 'METRICS_PORT' = 'PORT'): Error {
  const port = variable === 'PORT' ? config.port : config.metricsPort;
  switch (err.code) {
    case 'EADDRINUSE':
      return new ConfigError(variable, `port ${port} is already in use on ${config.host}`);
    case 'EACCES':
      return new ConfigError(variable, `port ${port}: permission denied (ports below 1024 need privileges)`);
    case 'EADDRNOTAVAIL':
      return new ConfigError('HOST', `${config.host} is not an address of this machine`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new ConfigError('HOST', `${config.host} does not resolve to an address`);
    default:
      return err;
  }
}

/** One serving process: compose, listen, drain on a signal. */
async function serve(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config.logLevel);
  // Until the composition exists a SIGHUP has nothing to reload (the start-up reads every file now); without a handler
  // it would end the process.
  let reload = (): void => undefined;
  process.on('SIGHUP', () => reload());
  // WORKERS>1 and DATA_REFRESH: the primary downloaded a list (supervise below); this worker swaps it in. Listened for
  // from the start and kept until the datasets exist: a message sent while they were being read was lost, and with it
  // the new list until the next download (hours), when a worker took longer to start than the first download.
  const early: RefreshMessage[] = [];
  let refreshed = (m: RefreshMessage): void => void early.push(m);
  process.on('message', (m: RefreshMessage) => {
    if (m?.type === 'data-refresh') refreshed(m);
  });
  const composition = await compose(config, logger);
  refreshed = (m) =>
    void composition.refreshed(m!.name, m!.counts).catch((err: unknown) => logger.warn({ dataset: m!.name, err: String(err) }, `refreshed ${m!.name} could not be used; the data in use stays`));
  for (const m of early.splice(0)) refreshed(m);
  const server = createHttpServer(await createApp({ ...composition.deps, metricsOnOwnPort: config.metricsPort !== null }));
  await listen(server, config.port, config.host).catch((err: NodeJS.ErrnoException) => {
    throw listenFailure(err, config);
  });
  // METRICS_PORT: /metrics alone on its own port (same HOST), for deployments that keep it private.
  const metricsServer = config.metricsPort === null ? null : createHttpServer(createMetricsApp(composition.deps.metrics));
  if (metricsServer) {
    await listen(metricsServer, config.metricsPort!, config.host).catch((err: NodeJS.ErrnoException) => {
      throw listenFailure(err, config, 'METRICS_PORT');
    });
  }
  const { port } = server.address() as AddressInfo;
  const metricsPort = metricsServer ? (metricsServer.address() as AddressInfo).port : null;
  logger.info({ port, metricsPort, host: config.host, pid: process.pid }, 'listening');
  // What the start-up deferred (the TLS trust store) is built a second after the first requests can come.
  setTimeout(() => composition.listening(), 1000).unref();
  if (cluster.isPrimary) {
    // The "listening on" line comes last: it says the server is ready.
    if (metricsPort !== null) process.stdout.write(`metrics on http://${config.host}:${metricsPort}/metrics\n`);
    process.stdout.write(`listening on http://${config.host}:${port} (docs at /docs)\n`);
  }
  // The GeoIP files are the last of the boot work; a timer lets the first requests' allocations settle too.
  void composition.loaded.then(() => setTimeout(compactHeapAfterBoot, 100).unref());

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    composition.beginDrain();
    const [how] = await Promise.all([drain(server, config.shutdownTimeoutMs), metricsServer && drain(metricsServer, config.shutdownTimeoutMs)]);
    await composition.close();
    logger.info({ how }, 'stopped');
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // SIGHUP: reload every file dataset (src/adapters/files/reload.ts); requests go on meanwhile.
  reload = () => void composition.reloader.reloadAll();
}

/** What the primary tells the workers after each DATA_REFRESH attempt: a list to swap in (name null: counts only). */
type RefreshMessage = { type: 'data-refresh'; name: string | null; path: string; counts: { refreshes: Record<string, number>; failures: Record<string, number> } } | undefined;

/** DATA_REFRESH under WORKERS>1: the primary alone downloads (once, not once per worker) and tells every worker. */
async function refreshForWorkers(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config.logLevel);
  const resolver = createDnsResolver({ servers: config.dnsServers ? await resolveServerNames(config.dnsServers) : systemDnsServers(), timeoutMs: config.dnsTimeoutMs, logger });
  let counts = { refreshes: {}, failures: {} };
  const tell = (m: RefreshMessage) => {
    for (const worker of Object.values(cluster.workers ?? {})) if (worker?.isConnected()) worker.send(m!);
  };
  const refresher = createDataRefresh(config, {
    resolve: addressResolver(resolver),
    shipped: shippedLists(config),
    logger,
    swap: async (name, path) => tell({ type: 'data-refresh', name, path, counts }),
    outcome: (now) => tell({ type: 'data-refresh', name: null, path: '', counts: (counts = now) }),
  });
  await refresher.start();
}

/**
 * The primary of WORKERS>1: forks the workers (they share the port), replaces crashed ones, forwards signals.
 * A worker that exits before it listens has failed to boot (a configuration error, already printed): while the
 * server is starting, that stops the whole server with exit 1 rather than forking the same failure forever; a
 * replacement that fails to boot later is retried once a second.
 */
function supervise(config: Readonly<Config>): void {
  // Embedded store: the primary holds the workers' usage counters (src/adapters/limits/cluster-counters.ts).
  const counters = config.redisUrl ? null : startClusterPrimary({ db: openDatabase(config.dataDir), logger: createLogger(config.logLevel) });
  const exit = (code: number) => void (counters?.close() ?? Promise.resolve()).finally(() => process.exit(code));
  let stopping = false;
  let failed = false;
  const listened = new Set<number>();
  const fork = () => cluster.fork();
  for (let i = 0; i < config.workers; i++) fork();
  if (config.dataRefresh) refreshForWorkers(config).catch((err: unknown) => process.stderr.write(`DATA_REFRESH could not start: ${String(err)}\n`));
  cluster.on('listening', (worker, address) => {
    // A worker listens on PORT first, then on METRICS_PORT when set: its first 'listening' is PORT's.
    if (listened.has(worker.id)) return;
    listened.add(worker.id);
    if (listened.size === config.workers) {
      if (config.metricsPort !== null) process.stdout.write(`metrics on http://${config.host}:${config.metricsPort}/metrics\n`);
      process.stdout.write(`listening on http://${config.host}:${address.port} with ${config.workers} workers (docs at /docs)\n`);
    }
  });
  const remaining = () => Object.keys(cluster.workers ?? {}).length;
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (remaining() === 0) exit(failed ? 1 : 0);
      return;
    }
    if (!listened.has(worker.id)) {
      if (listened.size < config.workers) {
        process.stderr.write(`worker ${worker.process.pid} could not start (${signal ?? code}); stopping\n`);
        failed = true;
        return stop('SIGTERM');
      }
      setTimeout(fork, 1000);
      return;
    }
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
    if (remaining() === 0) exit(failed ? 1 : 0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGTERM'));
  // SIGHUP to the primary (the pid an operator knows) reloads the datasets of every worker; each logs its own pass.
  // A worker still starting reads the files afresh anyway (and would not survive the signal before its handler is in).
  process.on('SIGHUP', () => {
    if (stopping) return;
    for (const worker of Object.values(cluster.workers ?? {})) if (worker && listened.has(worker.id)) worker.process.kill('SIGHUP');
  });
}

async function main(): Promise<void> {
  const config = readConfig();
  boundHeapGrowth();
  helpersYieldToTheEventLoop();
  if (cluster.isPrimary) await ensureFirstKey(config);
  if (cluster.isPrimary && config.workers > 1) return supervise(config);
  await serve(config);
}

main().catch((err) => {
  const kind = err instanceof ConfigError ? 'configuration error' : 'fatal';
  process.stderr.write(`${kind}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
