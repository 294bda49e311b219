// Email addresses (openapi.yaml validateEmail, validateEmails): syntax, MX, the role, disposable and free-provider
// lists (three reloadable datasets) and, with SMTP_CHECK=on, SMTP mailbox verification.
import type { DnsResolver } from '../adapters/dns/resolver.js';
import { Dataset } from '../adapters/files/dataset.js';
import { EMAIL_LIST_FILES, EMAIL_LIST_READERS, emailLists } from '../adapters/mail/email-lists.js';
import { createMailboxVerifier, type MailboxVerifier } from '../adapters/smtp/mailbox-verifier.js';
import { createProxyHealth, type ProxyHealth } from '../adapters/smtp/proxy-health.js';
import { runSmtpSession } from '../adapters/smtp/smtp-client.js';
import { smtpMetrics } from '../adapters/smtp/smtp-metrics.js';
import type { Config } from '../config.js';
import { createEmailClassifier } from '../domain/email.js';
import type { Logger } from '../http/logging.js';
import type { Metrics } from '../http/metrics.js';
import { createEmailBulkOperations } from '../operations/bulk.js';
import { createEmailOperations, type EmailDeps } from '../operations/email.js';
import { pace } from '../operations/pacing.js';
import type { DatasetCatalogue } from '../adapters/files/datasets.js';
import { loadDomainsOffLoop } from '../adapters/refresh/lists.js';
import { defineCapability } from './capability.js';
import { listFile } from './shared/refresh.js';
import { createSmtpShared, type SmtpShared } from './shared/smtp-shared.js';

declare module './capability.js' {
  interface Provided {
    /** The email check's parts: the lists in use (read once per request) and the SMTP verifier, if on. */
    email: EmailDeps;
    /** SMTP_CHECK=on: the session slots and verdict cache of every verifier of the process (and, with Redis, of all). */
    smtp: SmtpShared | null;
  }
}

type SmtpConfig = Pick<
  Config,
  'smtpCheck' | 'smtpPort' | 'smtpHeloName' | 'smtpMailFrom' | 'smtpTimeoutMs' | 'smtpDeadlineMs' | 'smtpMaxPerHost' | 'smtpMaxSessions' | 'smtpProxy' | 'allowPrivateTargets' | 'redisUrl'
>;

/**
 * SMTP mailbox verification (SMTP_CHECK=on): one verifier, so that its flights are shared by single requests and bulk
 * items alike; its session slots and verdict cache are the process's (`shared`, the jobs' verifier has them too). SMTP_PROXY down or
 * refusing: each verification says proxy_failed; the proxy's health gives one warning a minute and /readyz's
 * `degraded.smtpProxy`.
 */
function smtpVerifier(config: SmtpConfig, shared: SmtpShared | null, resolver: DnsResolver, logger: Logger, metrics: Metrics): { verifier: MailboxVerifier | null; proxyHealth: ProxyHealth | null } {
  if (!shared) return { verifier: null, proxyHealth: null };
  const proxyHealth = config.smtpProxy ? createProxyHealth({ proxy: config.smtpProxy, logger }) : null;
  const events = smtpMetrics(metrics.registry);
  const verifier = createMailboxVerifier({
    resolver,
    allowPrivate: config.allowPrivateTargets,
    port: config.smtpPort,
    heloName: config.smtpHeloName!,
    mailFrom: config.smtpMailFrom!,
    timeoutMs: config.smtpTimeoutMs,
    deadlineMs: config.smtpDeadlineMs,
    maxPerHost: config.smtpMaxPerHost,
    maxSessions: config.smtpMaxSessions,
    proxy: config.smtpProxy,
    logger,
    events,
    pace,
    ...(proxyHealth ? { session: proxyHealth.watch(runSmtpSession) } : {}),
  }, shared.slots, shared.verdicts);
  metrics.addCache('smtp_verdicts', () => {
    const s = verifier.stats();
    return { hits: s.cacheHits, misses: s.cacheMisses, size: s.cacheEntries };
  });
  events.watch(verifier);
  return { verifier, proxyHealth };
}

/**
 * The disposable domains: the package's list, or under DATA_REFRESH=on its saved download once there is one (parsed
 * in a worker, the set filled in slices between turns of the event loop, dated by its `# date:` line).
 */
function disposableList(config: Pick<Config, 'dataDir' | 'dataRefresh'>, catalogue: DatasetCatalogue): Dataset<ReadonlySet<string>> {
  let path: string = EMAIL_LIST_FILES.disposable;
  const read = async () => {
    path = await listFile(config, 'email-disposable', EMAIL_LIST_FILES.disposable);
    if (path === EMAIL_LIST_FILES.disposable) return { value: await EMAIL_LIST_READERS.disposable() };
    const { domains, date } = await loadDomainsOffLoop(path);
    return { value: domains, date };
  };
  return new Dataset<ReadonlySet<string>>({ name: 'email-disposable', files: () => [path], read }, catalogue);
}

export const email = defineCapability({
  name: 'email',
  config: ['dataDir', 'dataRefresh', 'redisUrl', 'smtpCheck', 'smtpPort', 'smtpHeloName', 'smtpMailFrom', 'smtpTimeoutMs', 'smtpDeadlineMs', 'smtpMaxPerHost', 'smtpMaxSessions', 'smtpProxy', 'allowPrivateTargets', 'bulkMaxItems'],
  async start({ config, catalogue, resolver, limiter, logger, metrics, spec, provide }) {
    const list = (name: string, file: keyof typeof EMAIL_LIST_FILES) =>
      new Dataset<ReadonlySet<string>>({ name, files: () => [EMAIL_LIST_FILES[file]], read: async () => ({ value: await EMAIL_LIST_READERS[file]() }) }, catalogue);
    const [role, free] = [list('email-role', 'role'), list('email-free', 'free')];
    const disposable = disposableList(config, catalogue);
    await Promise.all([role.load(), disposable.load(), free.load()]);
    const classify = () => createEmailClassifier(emailLists(role.value, disposable.value, free.value));
    let classifier = classify();
    for (const d of [role, disposable, free]) d.onSwap(() => (classifier = classify()));
    const smtp = config.smtpCheck ? await createSmtpShared(config, logger) : null;
    provide('smtp', smtp);
    const { verifier, proxyHealth } = smtpVerifier(config, smtp, resolver, logger, metrics);
    // The per-key daily SMTP quota (docs/limits.md) is the shared limiter's: single requests and bulks charge it alike.
    const deps: EmailDeps = { resolver, email: () => classifier, allowSpecialUse: config.allowPrivateTargets, verifier, smtpQuota: limiter };
    provide('email', deps);
    return {
      handlers: { validateEmail: createEmailOperations(deps).validateEmail, ...createEmailBulkOperations({ document: spec.document, maxItems: config.bulkMaxItems, email: deps }) },
      datasets: [disposable, free, role],
      degraded: (): Record<string, string> => {
        const proxy = proxyHealth?.degraded() ?? null;
        return proxy === null ? {} : { smtpProxy: proxy };
      },
      close: async () => smtp?.close(),
    };
  },
});
