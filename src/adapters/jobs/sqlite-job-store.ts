// The embedded job queue (docs/adr/0030): JobStore over SQLite in DATA_DIR/jobs.db, leases on items, one row per item
// so every item has exactly one result line, and a connection that never waits for another process's lock (ADR 0019).
import { setTimeout as sleep, setImmediate as turn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { isBusy, neverWait, openDatabase } from '../sqlite/database.js';
import { distinctItems, domainOrder } from '../../domain/job-items.js';
import { RECIPIENTS_PER_SESSION } from '../../domain/smtp-plan.js';
import {
  JobStoreUnavailable,
  type ClaimedItem,
  type ItemOutcome,
  type JobStore,
  type JobView,
  type LineStatus,
  type NewJob,
  type ResultLine,
  type WebhookDue,
} from './job-store.js';
import { migrateJobs, type JobRow } from './sqlite-job-schema.js';

/** A lease taken over this often at most fails the job: its item makes every worker crash (docs/jobs.md). */
export const MAX_CLAIMS = 5;
/** Result lines read per query while streaming; rows deleted per statement when purging. */
const PAGE = 200;
const PURGE_BATCH = 1000;
/** Tries of a write that finds the lock taken, the event loop turning between them. */
const BUSY_TRIES = 5;
/** Items written per transaction when a job arrives. */
const INSERT_CHUNK = 1000;
/**
 * The connection's page cache, KiB: SQLite's own default. better-sqlite3 builds SQLite with 16 MB, which a large job
 * filled (its rows, then every settle) outside the JS heap, in the API service's RSS; the file's pages stay in the
 * kernel's cache. Measured in docs/adr/0038.
 */
const PAGE_CACHE_KIB = 2000;

const view = (r: JobRow): JobView => ({
  id: r.id,
  keyId: r.key_id,
  status: r.status as JobView['status'],
  smtp: r.smtp === 1,
  total: r.total,
  distinct: r.distinct_items,
  processed: r.processed,
  counts: { deliverable: r.n_deliverable, undeliverable: r.n_undeliverable, risky: r.n_risky, unknown: r.n_unknown, not_checked: r.n_not_checked },
  retriesPending: r.retries_pending,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  expiresAt: r.expires_at,
  webhookUrl: r.webhook_url,
});

const COUNT_COLUMN: Readonly<Record<LineStatus, string>> = {
  deliverable: 'n_deliverable',
  undeliverable: 'n_undeliverable',
  risky: 'n_risky',
  unknown: 'n_unknown',
  not_checked: 'n_not_checked',
};

/** Run a write; SQLITE_BUSY (another process writes) is tried again a few times on timers, then JobStoreUnavailable. */
async function write<T>(fn: () => T): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return fn();
    } catch (err) {
      if (!isBusy(err)) throw err;
      if (i >= BUSY_TRIES) throw new JobStoreUnavailable('the job store is busy (another process holds its write lock)');
      await sleep(5 * i);
    }
  }
}

/** Whether each poll has work now (an item due, a webhook due, a job expired): one indexed read each, never a write. */
export interface DueChecks {
  items(now: number): boolean;
  webhooks(now: number): boolean;
  expired(now: number): boolean;
}
export type SqliteJobStore = JobStore & { due: DueChecks };

export function createSqliteJobStore(dataDir: string): SqliteJobStore {
  const db = openDatabase(dataDir, 'jobs.db');
  migrateJobs(db);
  neverWait(db);
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  const s = statements(db);
  const { closeAll, insertItems, arrive, claimTx, settleTx } = transactions(db, s);

  const owned = (id: string, keyId: string, now: number): JobRow | null => {
    const r = s.job.get(id) as JobRow | undefined;
    return r && r.key_id === keyId && r.expires_at > now && r.status !== 'deleting' && r.status !== 'incoming' ? r : null;
  };

  return {
    async create(job) {
      return view(await insert(s, { insertItems, arrive }, job));
    },
    async get(id, keyId, now) {
      const r = owned(id, keyId, now);
      return r ? view(r) : null;
    },
    async cancel(id, keyId, now) {
      const r = owned(id, keyId, now);
      if (!r) return null;
      if (r.status === 'queued' || r.status === 'running') await write(() => closeAll.immediate(id, 'cancelled', 'cancelled', now));
      return view(s.job.get(id) as JobRow);
    },
    results: (id, status) => readLines(s, id, status),
    claim: (worker, max, now, leaseMs) => write(() => claimTx.immediate(worker, max, now, leaseMs)),
    async renew(worker, items, until) {
      await write(() => db.transaction(() => items.forEach((i) => s.renew.run(until, i.jobId, i.index, worker))).immediate());
    },
    async settle(worker, outcomes, now) {
      await write(() => settleTx.immediate(worker, outcomes, now));
    },
    async dueWebhooks(now, max, leaseMs) {
      return write(() =>
        db.transaction(() =>
          (s.dueHooks.all(now, max) as JobRow[]).map((r): WebhookDue => {
            s.hookLease.run(now + leaseMs, r.id);
            return { jobId: r.id, url: r.webhook_url!, secret: r.webhook_secret!, attempts: r.webhook_attempts, job: view(r) };
          }),
        ).immediate(),
      );
    },
    async webhookTried(jobId, o) {
      const state = o.delivered ? 'delivered' : o.retryAt === null ? 'dropped' : 'pending';
      await write(() => s.hookTried.run(state, o.retryAt, jobId));
    },
    purgeExpired: (now) => purge(s, now),
    async stats(now) {
      const q = s.stats.get({ now }) as { queued: number; retries: number | null; oldest: number | null };
      return { queuedItems: q.queued, retryItems: q.retries ?? 0, oldestQueuedAt: q.oldest };
    },
    due: {
      items: (now) => s.anyDue.get(now) !== undefined,
      webhooks: (now) => s.dueHooks.get(now, 1) !== undefined,
      expired: (now) => s.expired.get({ now }) !== undefined,
    },
    async close() {
      db.close();
    },
  };
}

/** The store's transactions: each runs whole or not at all (better-sqlite3 rolls back on a throw). */
function transactions(db: Database.Database, s: Statements) {
  const finish = (id: string, status: 'completed' | 'cancelled' | 'failed', now: number) => s.finish.run({ id, status, now });
  /** Close every item of the job without a line as `not_checked` with `reason`, and end the job. */
  const closeAll = db.transaction((id: string, status: 'cancelled' | 'failed', reason: string, now: number) => {
    const n = s.closeOpen.run(reason, id).changes;
    s.addClosed.run({ n, id });
    finish(id, status, now);
  });
  const insertItems = db.transaction((job: NewJob, firstOf: Int32Array, seqOf: Int32Array, from: number, to: number) => {
    for (let idx = from; idx < to; idx++) {
      const first = firstOf[idx];
      s.insertItem.run(job.id, idx, job.items[idx], first === idx ? null : first, first === idx ? 1 : 0, job.createdAt, seqOf[first]);
    }
  });
  /** The job becomes `queued`, read in the same step: a worker (maybe another process's) may start it the moment after. */
  const arrive = db.transaction((id: string) => {
    s.arrived.run(id);
    return s.job.get(id) as JobRow;
  });
  const claimTx = db.transaction((worker: string, max: number, now: number, leaseMs: number) => {
    const out: ClaimedItem[] = [];
    for (const r of s.due.all(now, max) as Array<{ job_id: string; idx: number; email: string; attempts: number; claims: number; lease_owner: string | null; smtp: number }>) {
      if (r.claims >= MAX_CLAIMS) {
        closeAll(r.job_id, 'failed', 'job_failed', now);
        continue;
      }
      s.lease.run(now + leaseMs, worker, r.job_id, r.idx);
      if (r.attempts > 0 && r.lease_owner === null) s.retryTaken.run(r.job_id);
      s.start.run(now, r.job_id);
      out.push({ jobId: r.job_id, index: r.idx, email: r.email, smtp: r.smtp === 1, attempts: r.attempts });
    }
    // An item of a job failed above may have been claimed before the failure: drop what that closed.
    return out.filter((c) => (s.item.get(c.jobId, c.index) as { open: number } | undefined)?.open === 1);
  });
  const settleTx = db.transaction((worker: string, outcomes: readonly ItemOutcome[], now: number) => {
    for (const o of outcomes) {
      const row = s.item.get(o.jobId, o.index) as { open: number; lease_owner: string | null } | undefined;
      if (!row || row.open !== 1 || row.lease_owner !== worker) continue; // the lease was lost: another worker has it
      if (o.retryAt !== null) {
        s.retryLater.run(o.retryAt, o.attempts, o.jobId, o.index);
        s.retryAdded.run(o.jobId);
        continue;
      }
      const result = o.result === null ? null : JSON.stringify(o.result);
      s.done.run(o.status, o.reason, result, o.attempts, o.jobId, o.index);
      const copies = s.doneCopies.run(o.status, o.reason, result, o.attempts, o.jobId, o.index).changes;
      s.counted(o.status).run({ n: 1 + copies, id: o.jobId });
      const left = s.remaining.get(o.jobId) as { remaining: number; status: string };
      if (left.remaining === 0 && (left.status === 'queued' || left.status === 'running')) finish(o.jobId, 'completed', now);
    }
  });
  return { closeAll, insertItems, arrive, claimTx, settleTx };
}
type Transactions = ReturnType<typeof transactions>;

/**
 * A job arrives `incoming` (seen by no one), its items a chunk per transaction with the event loop turning between
 * (100,000 rows in one transaction held it for over a second: docs/adr/0030), then becomes `queued` in one step.
 */
async function insert(s: Statements, { insertItems, arrive }: Pick<Transactions, 'insertItems' | 'arrive'>, job: NewJob): Promise<JobRow> {
  const { firstOf, distinct } = distinctItems(job.items);
  // Each distinct item's place in the claiming order (grouped by domain); a repeat is never claimed.
  const seqOf = new Int32Array(job.items.length);
  domainOrder(job.items, firstOf, RECIPIENTS_PER_SESSION).forEach((idx, seq) => (seqOf[idx] = seq));
  await write(() =>
    s.insertJob.run({
      id: job.id, key_id: job.keyId, smtp: job.smtp ? 1 : 0, total: job.items.length, distinct, created_at: job.createdAt,
      expires_at: job.expiresAt, webhook_url: job.webhookUrl, webhook_secret: job.webhookSecret,
    }),
  );
  try {
    for (let from = 0; from < job.items.length; from += INSERT_CHUNK) {
      await write(() => insertItems.immediate(job, firstOf, seqOf, from, Math.min(job.items.length, from + INSERT_CHUNK)));
      await turn();
    }
    return await write(() => arrive.immediate(job.id));
  } catch (err) {
    // What was written goes with the next purge (expired at once); the caller answers 503.
    await write(() => s.abandon.run(job.id)).catch(() => undefined);
    throw err;
  }
}

/** The result lines of a job in submission order, a page per query (keyset on idx), the event loop turning between pages. */
async function* readLines(s: Statements, id: string, status: LineStatus | undefined): AsyncGenerator<ResultLine> {
  let after = -1;
  for (;;) {
    const rows = (status ? s.pageOf.all(id, after, status, PAGE) : s.page.all(id, after, PAGE)) as Array<{
      idx: number; email: string; attempts: number; status: LineStatus; reason: string; result: string | null;
    }>;
    for (const r of rows) yield { index: r.idx, email: r.email, attempts: r.attempts, status: r.status, reason: r.reason, result: r.result === null ? null : JSON.parse(r.result) };
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1].idx;
    await turn();
  }
}

/** Delete expired jobs: first hidden (status `deleting`), then their items at most PURGE_BATCH rows per statement. */
async function purge(s: Statements, now: number): Promise<number> {
  const ids = (s.expired.all({ now }) as Array<{ id: string }>).map((r) => r.id);
  for (const id of ids) {
    await write(() => s.hide.run(id));
    while ((await write(() => s.deleteItems.run(id, id, PURGE_BATCH).changes)) > 0) await turn();
    await write(() => s.deleteJob.run(id));
  }
  return ids.length;
}

type Statements = ReturnType<typeof statements>;

function statements(db: Database.Database) {
  const counted = new Map(Object.entries(COUNT_COLUMN).map(([status, column]) => [
    status,
    db.prepare(`UPDATE jobs SET processed = processed + @n, ${column} = ${column} + @n, remaining = remaining - 1 WHERE id = @id`),
  ]));
  return {
    insertJob: db.prepare(`INSERT INTO jobs (id, key_id, status, smtp, total, distinct_items, remaining, created_at, expires_at, webhook_url, webhook_secret)
      VALUES (@id, @key_id, 'incoming', @smtp, @total, @distinct, @distinct, @created_at, @expires_at, @webhook_url, @webhook_secret)`),
    insertItem: db.prepare('INSERT INTO job_items (job_id, idx, email, first_idx, open, due_at, seq) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    job: db.prepare('SELECT * FROM jobs WHERE id = ?'),
    item: db.prepare('SELECT open, lease_owner FROM job_items WHERE job_id = ? AND idx = ?'),
    arrived: db.prepare("UPDATE jobs SET status = 'queued' WHERE id = ? AND status = 'incoming'"),
    abandon: db.prepare("UPDATE jobs SET status = 'deleting', expires_at = 0 WHERE id = ?"),
    due: db.prepare(`SELECT i.job_id, i.idx, i.email, i.attempts, i.claims, i.lease_owner, j.smtp FROM job_items i JOIN jobs j ON j.id = i.job_id
      WHERE i.open = 1 AND i.due_at <= ? AND j.status IN ('queued', 'running') ORDER BY i.due_at, i.job_id, i.seq LIMIT ?`),
    anyDue: db.prepare(`SELECT 1 FROM job_items i JOIN jobs j ON j.id = i.job_id WHERE i.open = 1 AND i.due_at <= ? AND j.status IN ('queued', 'running') LIMIT 1`),
    lease: db.prepare('UPDATE job_items SET due_at = ?, lease_owner = ?, claims = claims + 1 WHERE job_id = ? AND idx = ?'),
    renew: db.prepare('UPDATE job_items SET due_at = ? WHERE job_id = ? AND idx = ? AND open = 1 AND lease_owner = ?'),
    retryTaken: db.prepare('UPDATE jobs SET retries_pending = max(0, retries_pending - 1) WHERE id = ?'),
    retryAdded: db.prepare('UPDATE jobs SET retries_pending = retries_pending + 1 WHERE id = ?'),
    retryLater: db.prepare('UPDATE job_items SET due_at = ?, attempts = ?, lease_owner = NULL, claims = 0 WHERE job_id = ? AND idx = ?'),
    start: db.prepare("UPDATE jobs SET status = 'running', started_at = coalesce(started_at, ?) WHERE id = ? AND status = 'queued'"),
    done: db.prepare('UPDATE job_items SET open = 0, done = 1, status = ?, reason = ?, result = ?, attempts = ?, lease_owner = NULL WHERE job_id = ? AND idx = ?'),
    doneCopies: db.prepare('UPDATE job_items INDEXED BY job_items_copies SET done = 1, status = ?, reason = ?, result = ?, attempts = ? WHERE job_id = ? AND first_idx = ? AND first_idx IS NOT NULL'),
    counted: (status: LineStatus) => counted.get(status)!,
    remaining: db.prepare('SELECT remaining, status FROM jobs WHERE id = ?'),
    closeOpen: db.prepare("UPDATE job_items SET open = 0, done = 1, status = 'not_checked', reason = ?, result = NULL, lease_owner = NULL WHERE job_id = ? AND done = 0"),
    addClosed: db.prepare('UPDATE jobs SET processed = processed + @n, n_not_checked = n_not_checked + @n, remaining = 0, retries_pending = 0 WHERE id = @id'),
    finish: db.prepare(`UPDATE jobs SET status = @status, finished_at = @now,
      webhook_state = CASE WHEN webhook_url IS NULL THEN NULL ELSE 'pending' END, webhook_due_at = @now WHERE id = @id`),
    page: db.prepare('SELECT idx, email, attempts, status, reason, result FROM job_items WHERE job_id = ? AND done = 1 AND idx > ? ORDER BY idx LIMIT ?'),
    pageOf: db.prepare('SELECT idx, email, attempts, status, reason, result FROM job_items WHERE job_id = ? AND done = 1 AND idx > ? AND status = ? ORDER BY idx LIMIT ?'),
    dueHooks: db.prepare("SELECT * FROM jobs WHERE webhook_state = 'pending' AND webhook_due_at <= ? ORDER BY webhook_due_at LIMIT ?"),
    hookLease: db.prepare('UPDATE jobs SET webhook_due_at = ? WHERE id = ?'),
    hookTried: db.prepare('UPDATE jobs SET webhook_state = ?, webhook_due_at = ?, webhook_attempts = webhook_attempts + 1 WHERE id = ?'),
    // Expired jobs, and jobs a crash left `incoming` for an hour.
    expired: db.prepare("SELECT id FROM jobs WHERE expires_at <= @now OR (status = 'incoming' AND created_at <= @now - 3600000) LIMIT 100"),
    hide: db.prepare("UPDATE jobs SET status = 'deleting' WHERE id = ?"),
    deleteItems: db.prepare('DELETE FROM job_items WHERE job_id = ? AND idx IN (SELECT idx FROM job_items WHERE job_id = ? LIMIT ?)'),
    deleteJob: db.prepare('DELETE FROM jobs WHERE id = ?'),
    stats: db.prepare(`SELECT (SELECT count(*) FROM job_items WHERE open = 1 AND due_at <= @now) AS queued,
      (SELECT sum(retries_pending) FROM jobs WHERE status IN ('queued', 'running')) AS retries,
      (SELECT min(created_at) FROM jobs WHERE status IN ('queued', 'running')) AS oldest`),
  };
}
