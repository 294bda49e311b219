// Job webhooks (openapi.yaml createEmailJob, "Webhook"): each ended job's status object POSTed once delivered, retried
// on JOBS_WEBHOOK_RETRY_DELAYS; the deliveries are leased in the job store, so one instance sends each.
import type { JobStore } from '../adapters/jobs/job-store.js';
import type { Delivery, WebhookPost } from '../adapters/jobs/webhook.js';
import { publicJob } from './jobs.js';
import { startPollingLoop } from './polling-loop.js';

export interface WebhookLoopOptions {
  store: JobStore;
  send: (post: WebhookPost) => Promise<Delivery>;
  retryDelaysMs: readonly number[];
  logger: { info: (obj: object, msg?: string) => void; warn: (obj: object, msg?: string) => void };
  pollMs?: number;
  now?: () => number;
}

/** How long a delivery stays this instance's: longer than its timeout, so that no other sends it meanwhile. */
const LEASE_MS = 60_000;

export function startWebhookLoop(o: WebhookLoopOptions): { wake(): void; stop(): Promise<void> } {
  const now = o.now ?? Date.now;
  async function deliverDue(): Promise<number> {
    const due = await o.store.dueWebhooks(now(), 10, LEASE_MS);
    await Promise.all(
      due.map(async (d) => {
        // The message id stays the same on every retry: receivers deduplicate on it (Standard Webhooks).
        const r = await o.send({ url: d.url, secret: d.secret, id: `msg_${d.jobId}`, body: JSON.stringify(publicJob(d.job)) });
        const delay = o.retryDelaysMs[d.attempts];
        const retryAt = r.ok || delay === undefined ? null : now() + delay;
        if (!r.ok) o.logger.warn({ job: d.jobId, attempt: d.attempts + 1, why: r.why, retry: retryAt !== null }, 'job webhook not delivered');
        await o.store.webhookTried(d.jobId, { delivered: r.ok, retryAt });
      }),
    );
    return due.length;
  }

  return startPollingLoop(
    async () =>
      (await deliverDue().catch((err: unknown) => {
        o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'job webhooks: the store is unavailable');
        return 0;
      })) > 0,
    o.pollMs ?? 1000,
  );
}
