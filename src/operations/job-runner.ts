// The job worker (docs/jobs.md): leases due items from the job store, checks them as validateEmail does (SMTP through
// the jobs' verifier), records each line or its retry (JOBS_RETRY_DELAYS), and renews its leases while it works.
import { randomUUID } from 'node:crypto';
import type { ClaimedItem, ItemOutcome, JobStore } from '../adapters/jobs/job-store.js';
import { lineVerdict, retryAt, type Checked } from '../domain/job-items.js';
import { RECIPIENTS_PER_SESSION } from '../domain/smtp-plan.js';
import { asApiError } from '../error-answers.js';
import { UpstreamFailure } from '../errors.js';
import { createEmailOperations, type EmailDeps } from './email.js';
import type { OperationContext } from './types.js';
import { startPollingLoop } from './polling-loop.js';

export interface JobRunnerOptions {
  store: JobStore;
  email: EmailDeps;
  retryDelaysMs: readonly number[];
  logger: { warn: (obj: object, msg?: string) => void; debug: (obj: object, msg?: string) => void };
  /** How long a claimed item stays this worker's without a renewal (default 30 s; renewed every third of it). */
  leaseMs?: number;
  /** How often an idle worker looks for due items (default 1 s); wake() looks at once. */
  pollMs?: number;
  /**
   * Batches worked at once (default 4): a batch is one domain's session, its RCPTs one after another, so one batch at
   * a time left a worker waiting on one server; the batches in hand go to different domains (job-items.ts domainOrder).
   */
  concurrency?: number;
  /**
   * Items claimed at once: as many as one SMTP session asks (default RECIPIENTS_PER_SESSION, 20), so that a batch of
   * one domain (the queue hands items out grouped by domain) is one session, not one per address.
   */
  batch?: number;
  now?: () => number;
}

export interface JobRunner {
  /** Look for due items now (a job was queued). */
  wake(): void;
  /** Finish the items in hand, then stop. */
  stop(): Promise<void>;
  /** Items this worker checked (metrics). */
  checked(): number;
}

/** One claimed item checked once: validateEmail's result, or none when the DNS servers failed. */
async function checkOne(validate: ReturnType<typeof createEmailOperations>['validateEmail'], address: string): Promise<Checked> {
  try {
    const reply = await validate({ request: { params: {}, query: { address }, requestBody: undefined, headers: {}, ip: '' } } as OperationContext<'validateEmail'>);
    return { result: reply.body as Extract<Checked, { result: object }>['result'] };
  } catch (err) {
    if (err instanceof UpstreamFailure || asApiError(err)?.status === 502) return { result: null };
    throw err;
  }
}

/** The checks of a batch: each item's format, DNS and lists; then, for SMTP jobs, the mailboxes, one domain's together. */
async function checkBatch(email: EmailDeps, items: readonly ClaimedItem[]): Promise<Checked[]> {
  const { validateEmail, deliverabilities } = createEmailOperations(email);
  const checked = await Promise.all(items.map((i) => checkOne(validateEmail, i.email)));
  const smtp = items.flatMap((item, k) => (item.smtp && checked[k].result !== null ? [k] : []));
  if (smtp.length > 0) {
    const verdicts = await deliverabilities(smtp.map((k) => items[k].email), true);
    smtp.forEach((k, n) => {
      const c = checked[k];
      if (c.result !== null) c.result = { ...c.result, deliverability: verdicts[n] };
    });
  }
  return checked;
}

export function startJobRunner(o: JobRunnerOptions): JobRunner {
  const worker = `${process.pid}-${randomUUID()}`;
  const now = o.now ?? Date.now;
  const leaseMs = o.leaseMs ?? 30_000;
  const pollMs = o.pollMs ?? 1000;
  let count = 0;

  async function work(items: ClaimedItem[]): Promise<void> {
    const renewal = setInterval(() => void o.store.renew(worker, items, now() + leaseMs).catch(() => undefined), Math.max(10, leaseMs / 3));
    try {
      const checked = await checkBatch(o.email, items);
      const at = now();
      const outcomes = items.map((item, k): ItemOutcome => {
        const attempts = item.attempts + 1;
        const { status, reason } = lineVerdict(checked[k]);
        const retry = retryAt(status, reason, attempts, o.retryDelaysMs, at);
        return { jobId: item.jobId, index: item.index, attempts, status, reason, result: checked[k].result, retryAt: retry };
      });
      await o.store.settle(worker, outcomes, at);
      count += items.length;
    } finally {
      clearInterval(renewal);
    }
  }

  const step = async (): Promise<boolean> => {
    try {
      const items = await o.store.claim(worker, o.batch ?? RECIPIENTS_PER_SESSION, now(), leaseMs);
      if (items.length === 0) return false;
      await work(items);
      return true;
    } catch (err) {
      // The store unavailable, or a fault on a batch: its leases run out and the items are taken again (at most
      // MAX_CLAIMS times, then the job fails). Addresses are never logged.
      o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'job worker: batch not settled, its items go back to the queue when their leases end');
      return false;
    }
  };
  const loops = Array.from({ length: o.concurrency ?? 4 }, () => startPollingLoop(step, pollMs));
  return {
    wake: () => loops.forEach((l) => l.wake()),
    stop: async () => void (await Promise.all(loops.map((l) => l.stop()))),
    checked: () => count,
  };
}
