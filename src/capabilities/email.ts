// Email addresses (openapi.yaml validateEmail, validateEmails): syntax, MX, the role, disposable and free-provider
// lists (three reloadable datasets) and, with SMTP_CHECK=on, SMTP mailbox verification.
import type { DnsResolver } from '../adapters/dns/resolver.js';
import { Dataset } from '../adapters/files/dataset.js';
import { EMAIL_LIST_FILES, EMAIL_LIST_READERS, emailLists } from '../adapters/mail/email-lists.js';
import { createMailboxVerifier, type MailboxVerifier } from '../adapters/smtp/mailbox-verifier.js';
import { smtpMetrics } from '../adapters/smtp/smtp-metrics.js';
import type { Config } from '../config.js';
import { createEmailClassifier } from '../domain/email.js';
import type { Logger } from '../http/logging.js';
import type { Metrics } from '../http/metrics.js';
import { createEmailBulkOperations } from '../operations/bulk.js';
import { createEmailOperations, type EmailDeps } from '../operations/email.js';
import { defineCapability } from './capability.js';

declare module './capability.js' {
  interface Provided {
    /** The email check's parts: the lists in use (read once per request) and the SMTP verifier, if on. */
    email: EmailDeps;
  }
}

type SmtpConfig = Pick<
  Config,
  'smtpCheck' | 'smtpPort' | 'smtpHeloName' | 'smtpMailFrom' | 'smtpTimeoutMs' | 'smtpDeadlineMs' | 'smtpMaxPerHost' | 'smtpMaxSessions' | 'smtpProxy' | 'allowPrivateTargets'
>;

/**
 * SMTP mailbox verification (SMTP_CHECK=on): one verifier, so that its session slots (per server address and per
 * process), its flights and its verdict cache are shared by single requests and bulk items alike.
 */
function smtpVerifier(config: SmtpConfig, resolver: DnsResolver, logger: Logger, metrics: Metrics): MailboxVerifier | null {
  if (!config.smtpCheck) return null;
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
  });
  metrics.addCache('smtp_verdicts', () => {
    const s = verifier.stats();
    return { hits: s.cacheHits, misses: s.cacheMisses, size: s.cacheEntries };
  });
  events.watch(verifier);
  return verifier;
}

export const email = defineCapability({
  name: 'email',
  config: ['smtpCheck', 'smtpPort', 'smtpHeloName', 'smtpMailFrom', 'smtpTimeoutMs', 'smtpDeadlineMs', 'smtpMaxPerHost', 'smtpMaxSessions', 'smtpProxy', 'allowPrivateTargets', 'bulkMaxItems'],
  async start({ config, catalogue, resolver, logger, metrics, spec, provide }) {
    const list = (name: string, file: keyof typeof EMAIL_LIST_FILES) =>
      new Dataset<ReadonlySet<string>>({ name, files: () => [EMAIL_LIST_FILES[file]], read: async () => ({ value: await EMAIL_LIST_READERS[file]() }) }, catalogue);
    const [role, disposable, free] = [list('email-role', 'role'), list('email-disposable', 'disposable'), list('email-free', 'free')];
    await Promise.all([role.load(), disposable.load(), free.load()]);
    const classify = () => createEmailClassifier(emailLists(role.value, disposable.value, free.value));
    let classifier = classify();
    for (const d of [role, disposable, free]) d.onSwap(() => (classifier = classify()));
    const deps: EmailDeps = { resolver, email: () => classifier, allowSpecialUse: config.allowPrivateTargets, verifier: smtpVerifier(config, resolver, logger, metrics) };
    provide('email', deps);
    return {
      handlers: { validateEmail: createEmailOperations(deps).validateEmail, ...createEmailBulkOperations({ document: spec.document, maxItems: config.bulkMaxItems, email: deps }) },
      datasets: [disposable, free, role],
    };
  },
});
