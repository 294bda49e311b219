// The jobs capability (issue #56, docs/jobs.md): its config (JOBS_*), the job store (SQLite under DATA_DIR, or BullMQ
// on Redis), its handlers, the worker and webhook loops (unless JOBS_WORKER=off), its metrics and its close.
import type { Limiter } from '../accounts/limits.js';
import type { JobStore } from '../adapters/jobs/job-store.js';
import { createSqliteJobStore } from '../adapters/jobs/sqlite-job-store.js';
import { createWebhookSender } from '../adapters/jobs/webhook.js';
import { addressResolver } from '../adapters/tls/target-guard.js';
import type { DnsResolver } from '../adapters/dns/resolver.js';
import type { MailboxVerifier } from '../adapters/smtp/mailbox-verifier.js';
import type { Config } from '../config.js';
import type { EmailClassifier } from '../domain/email.js';
import type { Logger } from '../http/logging.js';
import type { Metrics } from '../http/metrics.js';
import { startJobRunner, type JobRunner } from '../operations/job-runner.js';
import { startWebhookLoop } from '../operations/job-webhooks.js';
import { createJobsOperations } from '../operations/jobs.js';

export interface JobsCapabilityDeps {
  config: Readonly<Config>;
  logger: Logger;
  metrics: Metrics;
  limiter: Pick<Limiter, 'chargeQuota' | 'refundQuota'>;
  resolver: DnsResolver;
  email: () => EmailClassifier;
  /** The jobs' own verifier (SMTP_CHECK=on): its `unknown` verdicts are not cached, so a retry asks the server again. */
  verifier: MailboxVerifier | null;
  /** Tests: a store of their own, shorter leases and polls. */
  store?: JobStore;
  timing?: { leaseMs?: number; pollMs?: number };
}

/** Body limit of a job: 323 bytes an item (a 320-character address, its quotes and comma) plus 1 KiB. */
const jobBodyLimit = (maxItems: number): number => maxItems * 323 + 1024;

/** How often the expired jobs are deleted and the queue's gauges read. */
const HOUSEKEEPING_MS = 5000;

/** BullMQ on Redis where REDIS_URL is set (imported only then), else the embedded queue under DATA_DIR. */
async function openStore(config: Readonly<Config>, logger: Logger): Promise<JobStore> {
  if (!config.redisUrl) return createSqliteJobStore(config.dataDir);
  const [{ createRedisJobStore }, { createRedisClient, redisConnectionOptions }] = await Promise.all([import('../adapters/jobs/redis-job-store.js'), import('../adapters/redis/redis-client.js')]);
  const client = createRedisClient(config.redisUrl, { commandTimeoutMs: 5000, onError: (err) => logger.debug({ err: err.message }, 'redis connection error (jobs)') });
  const store = createRedisJobStore({
    client,
    queueConnection: redisConnectionOptions(config.redisUrl, false),
    workerConnection: redisConnectionOptions(config.redisUrl, true),
    leaseMs: config.jobsLeaseMs,
  });
  return { ...store, close: async () => (await store.close(), client.disconnect()) };
}

export async function createJobsCapability(d: JobsCapabilityDeps) {
  const { config, logger } = d;
  const store = d.store ?? (await openStore(config, logger));
  let runner: JobRunner | null = null;
  let hooks: ReturnType<typeof startWebhookLoop> | null = null;
  if (config.jobsWorker) {
    runner = startJobRunner({
      store,
      email: { resolver: d.resolver, email: d.email, allowSpecialUse: config.allowPrivateTargets, verifier: d.verifier },
      retryDelaysMs: config.jobsRetryDelaysMs,
      logger,
      leaseMs: config.jobsLeaseMs,
      ...d.timing,
    });
    const send = createWebhookSender({ resolve: addressResolver(d.resolver), allowPrivate: config.allowPrivateTargets, timeoutMs: 10_000 });
    hooks = startWebhookLoop({ store, send, retryDelaysMs: config.jobsWebhookRetryDelaysMs, logger, pollMs: d.timing?.pollMs });
  }
  const handlers = createJobsOperations({
    store,
    limiter: d.limiter,
    maxItems: config.jobsMaxItems,
    retentionHours: config.jobsRetentionHours,
    onChange: () => {
      runner?.wake();
      hooks?.wake();
    },
  });

  // Gauges are read synchronously at a scrape: the queue's figures are read here every few seconds instead.
  let stats = { queuedItems: 0, retryItems: 0, oldestQueuedAt: null as number | null };
  const housekeeping = setInterval(() => {
    const now = Date.now();
    void store.stats(now).then((s) => (stats = s), () => undefined);
    void store.purgeExpired(now).catch((err: unknown) => logger.warn({ err: String(err) }, 'expired jobs not deleted yet'));
  }, HOUSEKEEPING_MS);
  housekeeping.unref();
  d.metrics.addGauge('jobs_items', 'Email job items: queued (due now) and waiting for a retry', 'state', () => ({ queued: stats.queuedItems, retry: stats.retryItems }));
  d.metrics.addGauge('jobs_oldest_queued_age_seconds', 'Age of the oldest job not yet ended', 'queue', () => ({ email: stats.oldestQueuedAt === null ? 0 : (Date.now() - stats.oldestQueuedAt) / 1000 }));
  d.metrics.addCounter('jobs_items_checked_total', 'Email job items checked by this process (retries included)', () => runner?.checked() ?? 0);

  return {
    handlers,
    bodyLimits: { createEmailJob: jobBodyLimit(config.jobsMaxItems) },
    store,
    async close() {
      clearInterval(housekeeping);
      await Promise.all([runner?.stop(), hooks?.stop()]);
      await store.close();
    },
  };
}
