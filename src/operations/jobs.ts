// Email verification jobs (openapi.yaml tag Jobs): submit (JSON or CSV), status, streamed results, cancel.
import { randomBytes } from 'node:crypto';
import type { Limiter } from '../accounts/limits.js';
import { JobStoreUnavailable, type JobStore, type JobView, type LineStatus, type ResultLine } from '../adapters/jobs/job-store.js';
import { newWebhookSecret } from '../adapters/jobs/webhook.js';
import { maskCardNumbers } from '../domain/card.js';
import { parseUrl } from '../domain/url.js';
import { csvRecord } from '../domain/csv.js';
import { CSV_COLUMNS, csvCells } from '../domain/job-items.js';
import { ApiError, invalidFormat, notFound } from '../errors.js';
import { keyOf, type OperationHandler, type SuccessBody } from './types.js';
import type { KeyRecord } from '../adapters/keys/key-store.js';
import { distinctItems } from '../domain/job-items.js';

export interface JobsDeps {
  store: JobStore;
  /**
   * The quotas. `consumeSmtp(key, n)` is the per-key daily SMTP quota of issue #55 (same name and meaning as there):
   * a job with `smtp` charges its distinct addresses to it at submission; absent where that quota does not exist.
   */
  limiter: Pick<Limiter, 'chargeQuota' | 'refundQuota'> & { consumeSmtp?: (key: KeyRecord, n: number) => Promise<unknown> };
  /** JOBS_MAX_ITEMS. */
  maxItems: number;
  /** JOBS_RETENTION_HOURS. */
  retentionHours: number;
  /** A job was queued or cancelled: the local worker and webhook sender look at once rather than at their next poll. */
  onChange?: () => void;
  now?: () => number;
}

type EmailJob = SuccessBody<'getEmailJob'>;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A job as the API shows it (openapi.yaml EmailJob): never its owner or webhook URL. */
export function publicJob(j: JobView): EmailJob {
  return {
    id: j.id, status: j.status, smtp: j.smtp, total: j.total, distinct: j.distinct, processed: j.processed, counts: { ...j.counts },
    retriesPending: j.retriesPending, createdAt: iso(j.createdAt)!, startedAt: iso(j.startedAt), finishedAt: iso(j.finishedAt), expiresAt: iso(j.expiresAt)!,
  };
}

/** The store's "not now" as the contract's 503 UPSTREAM_UNAVAILABLE with Retry-After (nothing queued, nothing charged). */
function unavailable(err: unknown): never {
  if (!(err instanceof JobStoreUnavailable)) throw err;
  throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', `the job store is unavailable: ${err.message}; nothing was queued`, {
    headers: { 'Retry-After': String(err.retryAfterSeconds) },
  });
}

const NOT_FOUND = 'no job with this id for this key (it may have expired)';

/** NDJSON, or CSV when the client asks for text/csv and not for NDJSON (openapi.yaml getEmailJobResults). */
const wantsCsv = (accept: string | string[] | undefined): boolean => {
  const a = String(accept ?? '');
  return /\btext\/csv\b/i.test(a) && !/\bapplication\/x-ndjson\b/i.test(a);
};

async function* ndjson(lines: AsyncIterable<ResultLine>): AsyncGenerator<string> {
  for await (const l of lines) yield `${JSON.stringify({ index: l.index, email: l.email, attempts: l.attempts, status: l.status, reason: l.reason, result: l.result })}\n`;
}

async function* csv(lines: AsyncIterable<ResultLine>): AsyncGenerator<string> {
  yield csvRecord(CSV_COLUMNS);
  for await (const l of lines) yield csvRecord(csvCells(l));
}

/**
 * Every item against the daily and monthly quotas, then (smtp) the distinct addresses against the SMTP quota; a
 * refusal of the second gives the first back: a job that does not fit is refused whole, nothing charged.
 */
async function chargeJob(limiter: JobsDeps['limiter'], key: KeyRecord, items: readonly string[], smtp: boolean) {
  const charged = await limiter.chargeQuota(key, items.length);
  if (smtp && limiter.consumeSmtp) {
    await limiter.consumeSmtp(key, distinctItems(items).distinct).catch(async (err: unknown) => {
      await limiter.refundQuota(key, items.length);
      throw err;
    });
  }
  return charged;
}

export function createJobsOperations(deps: JobsDeps): {
  createEmailJob: OperationHandler<'createEmailJob'>;
  getEmailJob: OperationHandler<'getEmailJob'>;
  cancelEmailJob: OperationHandler<'cancelEmailJob'>;
  getEmailJobResults: OperationHandler<'getEmailJobResults'>;
} {
  const now = deps.now ?? Date.now;
  const charge = (key: KeyRecord, items: readonly string[], smtp: boolean) => chargeJob(deps.limiter, key, items, smtp);
  return {
    async createEmailJob(context) {
      const { request } = context;
      const key = keyOf(context);
      const body = request.requestBody;
      if (body.items.length > deps.maxItems) {
        throw invalidFormat('items', `must hold at most ${deps.maxItems} items (JOBS_MAX_ITEMS), not ${body.items.length}`);
      }
      const smtp = body.smtp ?? request.query.smtp === 'true';
      const webhookUrl = body.webhookUrl ?? request.query.webhookUrl ?? null;
      if (webhookUrl !== null && parseUrl(webhookUrl) === null) throw invalidFormat('webhookUrl', 'must be an http or https URL of at most 2048 characters');
      // A card number typed into the list is never stored: masked before anything is kept (openapi.yaml Privacy).
      const items = body.items.map(maskCardNumbers);
      const charged = await charge(key, items, smtp);
      const created = now();
      const webhookSecret = webhookUrl === null ? null : newWebhookSecret();
      const id = `job_${randomBytes(16).toString('hex')}`;
      const job = await deps.store
        .create({ id, keyId: key.id, items, smtp, webhookUrl, webhookSecret, createdAt: created, expiresAt: created + deps.retentionHours * 3_600_000 })
        .catch(async (err: unknown) => {
          await deps.limiter.refundQuota(key, items.length);
          return unavailable(err);
        });
      deps.onChange?.();
      return {
        status: 202,
        headers: { ...charged.headers, Location: `/api/v1/email/jobs/${id}` },
        body: { ...publicJob(job), ...(webhookSecret === null ? {} : { webhookSecret }) },
      };
    },

    async getEmailJob(context) {
      const job = await deps.store.get(context.request.params.id, keyOf(context).id, now());
      if (!job) throw notFound(NOT_FOUND);
      return { status: 200, body: publicJob(job) };
    },

    async cancelEmailJob(context) {
      const job = await deps.store.cancel(context.request.params.id, keyOf(context).id, now()).catch(unavailable);
      if (!job) throw notFound(NOT_FOUND);
      deps.onChange?.();
      return { status: 200, body: publicJob(job) };
    },

    async getEmailJobResults(context) {
      const { request } = context;
      const job = await deps.store.get(request.params.id, keyOf(context).id, now());
      if (!job) throw notFound(NOT_FOUND);
      const lines = deps.store.results(job.id, request.query.status as LineStatus | undefined);
      const asCsv = wantsCsv(request.headers.accept);
      return {
        status: 200,
        body: null,
        headers: { 'X-Job-Status': job.status },
        stream: asCsv
          ? { contentType: 'text/csv; charset=utf-8; header=present', chunks: csv(lines) }
          : { contentType: 'application/x-ndjson; charset=utf-8', chunks: ndjson(lines) },
      };
    },
  };
}
