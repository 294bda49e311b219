// The one queue interface of email verification jobs (openapi.yaml tag Jobs, docs/jobs.md): the embedded SQLite store
// (sqlite-job-store.ts) and BullMQ on Redis implement it alike. Items are leased, so a crashed worker's are taken over.

type JobStatus = 'queued' | 'running' | 'completed' | 'cancelled' | 'failed';
export type LineStatus = 'deliverable' | 'undeliverable' | 'risky' | 'unknown' | 'not_checked';

/** A job's status and progress as the API shows it, plus what only the service sees (owner, webhook). */
export interface JobView {
  id: string;
  keyId: string;
  status: JobStatus;
  smtp: boolean;
  total: number;
  distinct: number;
  processed: number;
  counts: Record<LineStatus, number>;
  retriesPending: number;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  expiresAt: number;
  webhookUrl: string | null;
}

export interface NewJob {
  id: string;
  keyId: string;
  /** The items as submitted, duplicates included (each verified once: the store links a repeat to its first). */
  items: readonly string[];
  smtp: boolean;
  webhookUrl: string | null;
  webhookSecret: string | null;
  createdAt: number;
  expiresAt: number;
}

/** One distinct item handed to a worker under a lease. */
export interface ClaimedItem {
  jobId: string;
  index: number;
  email: string;
  smtp: boolean;
  /** Checks made before this one. */
  attempts: number;
}

/** What a worker found for a claimed item: its result line, or a retry at `retryAt` (ms since the epoch). */
export interface ItemOutcome {
  jobId: string;
  index: number;
  attempts: number;
  status: LineStatus;
  reason: string;
  result: unknown;
  retryAt: number | null;
}

export interface ResultLine {
  index: number;
  email: string;
  attempts: number;
  status: LineStatus;
  reason: string;
  result: unknown;
}

/** A webhook due to be sent: the job's status object as of its end, and where and how to sign it. */
export interface WebhookDue {
  jobId: string;
  url: string;
  secret: string;
  /** Deliveries tried before this one. */
  attempts: number;
  job: JobView;
}

export interface JobStore {
  /** Queue a job (all of it or nothing); returns it as queued, even if a worker started it meanwhile. Throws JobStoreUnavailable when the store cannot take it now. */
  create(job: NewJob): Promise<JobView>;
  /** The job if `keyId` owns it and it has not expired; else null. */
  get(id: string, keyId: string, now: number): Promise<JobView | null>;
  /** Cancel: every item without a result gets `not_checked`/`cancelled`. Null as get(); an ended job is left as it is. */
  cancel(id: string, keyId: string, now: number): Promise<JobView | null>;
  /** The result lines so far, in submission order, read from the store page by page. */
  results(id: string, status: LineStatus | undefined): AsyncIterable<ResultLine>;
  /** Lease up to `max` due items (waiting ones, and leased ones whose lease ran out) to `worker` until now + leaseMs. */
  claim(worker: string, max: number, now: number, leaseMs: number): Promise<ClaimedItem[]>;
  /** Extend the worker's leases of these items (a long SMTP dialogue). */
  renew(worker: string, items: readonly ClaimedItem[], until: number): Promise<void>;
  /** Record outcomes of items this worker still holds (a lost lease's outcome is dropped: one line per item). */
  settle(worker: string, outcomes: readonly ItemOutcome[], now: number): Promise<void>;
  /** Lease the webhooks due now for `leaseMs`. */
  dueWebhooks(now: number, max: number, leaseMs: number): Promise<WebhookDue[]>;
  /** A delivery's end: sent, dropped (out of retries), or to be tried again at `retryAt`. */
  webhookTried(jobId: string, outcome: { retryAt: number | null; delivered: boolean }): Promise<void>;
  /** Delete expired jobs and their items in bounded batches; how many jobs went. */
  purgeExpired(now: number): Promise<number>;
  /** Queued items, items waiting for a retry, the oldest queued job's creation time (metrics). */
  stats(now: number): Promise<{ queuedItems: number; retryItems: number; oldestQueuedAt: number | null }>;
  close(): Promise<void>;
}

/** The store cannot take a write now (SQLite: another process holds the lock; Redis: unreachable). */
export class JobStoreUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
    this.name = 'JobStoreUnavailable';
  }
}
