// `npm run job-worker` (node dist/src/job-worker.js): a process that only works on email verification jobs (docs/jobs.md):
// no API port (PORT is not read; /metrics on METRICS_PORT when set), the same configuration as the server (DATA_DIR,
// REDIS_URL or REDIS_SENTINELS, DNS_SERVERS, SMTP_*, JOBS_*), as many of them as the lists need. SIGTERM/SIGINT: the
// items in hand are finished, then it exits 0.
import { availableParallelism } from 'node:os';
import { exitBelowNodeFloor } from './node-floor.js';

exitBelowNodeFloor();
const [{ loadConfig }, { ConfigError }, { createLogger }, { createMetrics }, { unlimited }, { createDnsResolver, systemDnsServers, resolveServerNames }, { loadEmailLists }, { createEmailClassifier }, { startJobs }, { lowerThreadPriorities }] =
  await Promise.all([
    import('./config.js'),
    import('./errors.js'),
    import('./http/logging.js'),
    import('./http/metrics.js'),
    import('./accounts/limits.js'),
    import('./adapters/dns/resolver.js'),
    import('./adapters/mail/email-lists.js'),
    import('./domain/email.js'),
    import('./capabilities/jobs.js'),
    import('./adapters/files/thread-priority.js'),
  ]);
const [{ createMetricsApp }, { createHttpServer, listen }] = await Promise.all([import('./http/system-routes.js'), import('./server.js')]);

let config;
try {
  // JOBS_WORKER=off is for the servers beside these processes: this one is a worker whatever it says.
  config = { ...loadConfig(process.env, availableParallelism()), jobsWorker: true };
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`configuration error: ${err.message}\n`);
  process.exit(1);
}
const logger = createLogger(config.logLevel);
// Batch work: on a host shared with servers, a request waking a server's event loop takes the CPU from the verifying
// (docs/adr/0043). Before any work, so that every thread started from here on inherits it.
const lowered = lowerThreadPriorities(config.jobsWorkerNice);
const resolver = createDnsResolver({
  servers: config.dnsServers ? await resolveServerNames(config.dnsServers) : systemDnsServers(),
  timeoutMs: config.dnsTimeoutMs,
  logger,
});
const lists = createEmailClassifier(await loadEmailLists());
const metrics = createMetrics();
const jobs = await startJobs({ config, logger, metrics, limiter: unlimited, resolver, email: () => lists });
// Scraped like the servers (the "jobs stopped moving" alert sums every process's checked items).
const metricsServer = config.metricsPort === null ? null : createHttpServer(createMetricsApp(metrics));
if (metricsServer) await listen(metricsServer, config.metricsPort!, config.host);
logger.info({ pid: process.pid, store: config.redisUrl ? 'redis' : 'sqlite', metricsPort: config.metricsPort, nice: config.jobsWorkerNice, threadsLowered: lowered }, 'job worker started');

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'job worker stopping');
  metricsServer?.close();
  await jobs.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
