// Email verification jobs (issue #56, openapi.yaml tag Jobs, docs/jobs.md): the JOBS_* settings, the job store (SQLite
// under DATA_DIR, or BullMQ where Redis is configured), the handlers, the worker and webhook loops (unless
// JOBS_WORKER=off), the queue's metrics and the close. `npm run job-worker` starts the same loops without the API.
import type { Limiter } from '../accounts/limits.js';
import type { DnsResolver } from '../adapters/dns/resolver.js';
import type { JobStore } from '../adapters/jobs/job-store.js';
import { internedVerdicts } from '../adapters/jobs/interned-verdicts.js';
import { openThreadedSqliteJobStore } from '../adapters/jobs/threaded-job-store.js';
import { createWebhookSender } from '../adapters/jobs/webhook.js';
import { createMailboxVerifier, type MailboxVerifier } from '../adapters/smtp/mailbox-verifier.js';
import { addressResolver } from '../adapters/tls/target-guard.js';
import type { Config } from '../config.js';
import type { Logger } from '../http/logging.js';
import type { Metrics } from '../http/metrics.js';
import type { EmailDeps } from '../operations/email.js';
import { startJobRunner, type JobRunner } from '../operations/job-runner.js';
import { pace } from '../operations/pacing.js';
import { startWebhookLoop } from '../operations/job-webhooks.js';
import { createJobsOperations } from '../operations/jobs.js';
import { defineCapability } from './capability.js';
import { createSmtpShared, type SmtpShared } from './shared/smtp-shared.js';

const SETTINGS = [
  'dataDir', 'redisUrl', 'jobsMaxItems', 'jobsRetentionHours', 'jobsRetryDelaysMs', 'jobsWebhookRetryDelaysMs', 'jobsWorker', 'jobsLeaseMs',
  'allowPrivateTargets', 'smtpCheck', 'smtpPort', 'smtpHeloName', 'smtpMailFrom', 'smtpTimeoutMs', 'smtpDeadlineMs', 'smtpMaxPerHost', 'smtpMaxSessions', 'smtpProxy',
] as const;
type JobsConfig = Pick<Config, (typeof SETTINGS)[number]>;

export interface JobsParts {
  config: JobsConfig;
  logger: Logger;
  metrics: Metrics;
  limiter: Pick<Limiter, 'chargeQuota' | 'refundQuota' | 'consumeSmtp'>;
  resolver: DnsResolver;
  /** The email check's lists (the email capability's, or the job worker's own). */
  email: EmailDeps['email'];
  /** The email capability's SMTP slots and verdicts; absent in `npm run job-worker`, which builds its own. */
  smtp?: SmtpShared | null;
}

/** Body limit of a job: 323 bytes an item (a 320-character address, its quotes and comma) plus 1 KiB. */
const jobBodyLimit = (maxItems: number): number => maxItems * 323 + 1024;
/** How often the expired jobs are deleted and the queue's gauges read. */
const HOUSEKEEPING_MS = 5000;

/**
 * The jobs' own verifier (SMTP_CHECK=on): an `unknown` verdict in the cache is not taken, so a retry asks the server
 * again. Its session slots and verdict cache are the process's (`smtp`): SMTP_MAX_PER_HOST counts its sessions and the
 * requests' together, across every process with Redis (docs/jobs.md). A job's verdicts, which fill that cache, go in
 * as shared objects (interned-verdicts.ts, docs/adr/0038).
 */
function jobVerifier(config: JobsConfig, smtp: SmtpShared | null, resolver: DnsResolver, logger: Logger): MailboxVerifier | null {
  if (!smtp) return null;
  return createMailboxVerifier({
    resolver, allowPrivate: config.allowPrivateTargets, port: config.smtpPort, heloName: config.smtpHeloName!, mailFrom: config.smtpMailFrom!,
    timeoutMs: config.smtpTimeoutMs, deadlineMs: config.smtpDeadlineMs, maxPerHost: config.smtpMaxPerHost, proxy: config.smtpProxy, logger, reuseUnknown: false,
    // The requests' turn budget (ADR 0036/0037): with the embedded queue this verifier shares the service's event loop.
    pace,
  }, smtp.slots, internedVerdicts(smtp.verdicts));
}

/** BullMQ on Redis where it is configured (imported only then), else the embedded queue under DATA_DIR (its writes in a thread). */
async function openJobStore(config: JobsConfig, logger: Logger): Promise<JobStore> {
  if (!config.redisUrl) return openThreadedSqliteJobStore(config.dataDir);
  const [{ createRedisJobStore }, { createRedisClient, createLibraryConnection }] = await Promise.all([import('../adapters/jobs/redis-job-store.js'), import('../adapters/redis/redis-client.js')]);
  const url = config.redisUrl;
  const onError = (err: Error) => logger.debug({ err: err.message }, 'redis connection error (jobs)');
  const client = createRedisClient(url, { commandTimeoutMs: 5000, onError });
  const queueConnection = createLibraryConnection(url, false, onError);
  let workerConnection: ReturnType<typeof createLibraryConnection> | null = null;
  const store = createRedisJobStore({ client, queueConnection, workerConnection: () => (workerConnection ??= createLibraryConnection(url, true, onError)), leaseMs: config.jobsLeaseMs });
  return {
    ...store,
    async close() {
      await store.close();
      for (const c of [client, queueConnection, workerConnection]) c?.disconnect();
    },
  };
}

/** The worker and webhook loops: an idle one looks as often as the shortest delay it must honour, at most every second. */
function startLoops(p: JobsParts, store: JobStore, smtp: SmtpShared | null) {
  const { config, logger, resolver } = p;
  const pollMs = Math.min(1000, ...config.jobsRetryDelaysMs, ...config.jobsWebhookRetryDelaysMs);
  const email: EmailDeps = { resolver, email: p.email, allowSpecialUse: config.allowPrivateTargets, verifier: jobVerifier(config, smtp, resolver, logger) };
  const runner = startJobRunner({ store, email, retryDelaysMs: config.jobsRetryDelaysMs, logger, leaseMs: config.jobsLeaseMs, pollMs });
  const send = createWebhookSender({ resolve: addressResolver(resolver), allowPrivate: config.allowPrivateTargets, timeoutMs: 10_000 });
  const hooks = startWebhookLoop({ store, send, retryDelaysMs: config.jobsWebhookRetryDelaysMs, logger, pollMs });
  return { runner, hooks };
}

/** The queue's figures on /metrics: gauges read at a scrape, so the store is read every few seconds instead. */
function queueMetrics(p: JobsParts, store: JobStore, runner: JobRunner | null): () => void {
  let stats = { queuedItems: 0, retryItems: 0, oldestQueuedAt: null as number | null };
  const timer = setInterval(() => {
    const now = Date.now();
    void store.stats(now).then((s) => (stats = s), () => undefined);
    void store.purgeExpired(now).catch((err: unknown) => p.logger.warn({ err: String(err) }, 'expired jobs not deleted yet'));
  }, HOUSEKEEPING_MS);
  timer.unref();
  p.metrics.addGauge('jobs_items', 'Email job items: queued (due now) and waiting for a retry', 'state', () => ({ queued: stats.queuedItems, retry: stats.retryItems }));
  p.metrics.addGauge('jobs_oldest_queued_age_seconds', 'Age of the oldest job not yet ended', 'queue', () => ({ email: stats.oldestQueuedAt === null ? 0 : (Date.now() - stats.oldestQueuedAt) / 1000 }));
  p.metrics.addCounter('jobs_items_checked_total', 'Email job items checked by this process (retries included)', () => runner?.checked() ?? 0);
  return () => clearInterval(timer);
}

/** The store, the loops (when this process works on jobs), the handlers and the metrics; close stops them in order. */
export async function startJobs(p: JobsParts) {
  const store = await openJobStore(p.config, p.logger);
  const own = p.smtp === undefined && p.config.jobsWorker && p.config.smtpCheck ? await createSmtpShared(p.config, p.logger) : null;
  const loops = p.config.jobsWorker ? startLoops(p, store, p.smtp ?? own) : null;
  const stopMetrics = queueMetrics(p, store, loops?.runner ?? null);
  const handlers = createJobsOperations({
    store,
    limiter: p.limiter,
    maxItems: p.config.jobsMaxItems,
    retentionHours: p.config.jobsRetentionHours,
    onChange: () => {
      loops?.runner.wake();
      loops?.hooks.wake();
    },
  });
  return {
    handlers,
    bodyLimits: { createEmailJob: jobBodyLimit(p.config.jobsMaxItems) },
    async close() {
      stopMetrics();
      await Promise.all([loops?.runner.stop(), loops?.hooks.stop()]);
      await Promise.all([store.close(), own?.close()]);
    },
  };
}

export const jobs = defineCapability({
  name: 'jobs',
  config: SETTINGS,
  async start({ config, logger, metrics, limiter, resolver, need }) {
    return startJobs({ config, logger, metrics, limiter, resolver, email: need('email').email, smtp: need('smtp') });
  },
});
