// The job queue on Redis (REDIS_URL; docs/adr/0030): BullMQ holds the distinct items (one BullMQ job each, taken by
// manual fetching with a lock per item, stalled items requeued by BullMQ), Redis hashes hold each job's status and
// its lines, each line written at most once (HSETNX): every item appears exactly once, whichever worker finishes it.
import { randomUUID } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { distinctItems, domainOrder } from '../../domain/job-items.js';
import { RECIPIENTS_PER_SESSION } from '../../domain/smtp-plan.js';
import { JobStoreUnavailable, type ClaimedItem, type ItemOutcome, type JobStore, type JobView, type LineStatus, type NewJob, type ResultLine, type WebhookDue } from './job-store.js';
import { ARRIVED, CLOSE_PAGE, DUE_HOOKS, END_EARLY, LEASE_EXPANSION, SETTLE, START } from './redis-job-scripts.js';

/** A BullMQ item stalled (its worker gone) this often fails its job (as MAX_CLAIMS does on the embedded queue). */
const MAX_STALLS = 5;
const QUEUE = 'email-items';
const PAGE = 500;
const OPEN = 'ej:open';
const HOOKS = 'ej:webhooks';
/** Jobs being written, by creation time: one a crash left here this long is deleted (its submitter got an error). */
const INCOMING = 'ej:incoming';
const INCOMING_MAX_MS = 3600_000;
/** Queued jobs whose BullMQ items are still to be added, by when their expansion's lease ends (0: not leased). */
const EXPANDING = 'ej:expanding';
const k = (id: string, part: string) => `ej:{${id}}:${part}`;

interface ItemData {
  jobId: string;
  index: number;
  email: string;
  smtp: boolean;
  attempts: number;
}

export interface RedisJobStoreOptions {
  /** Commands of the API and the bookkeeping: fails fast while Redis is down (no offline queue). */
  client: Redis;
  /** BullMQ's connections: the queue's (failing fast) and the worker's (blocking; made at the first claim). */
  queueConnection: Redis;
  workerConnection: () => Redis;
  leaseMs: number;
}

const num = (v: string | undefined): number => Number(v ?? 0);
const orNull = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));

function view(id: string, m: Record<string, string>): JobView {
  return {
    id, keyId: m.keyId, status: m.status as JobView['status'], smtp: m.smtp === '1', total: num(m.total), distinct: num(m.distinct),
    processed: num(m.processed),
    counts: { deliverable: num(m.n_deliverable), undeliverable: num(m.n_undeliverable), risky: num(m.n_risky), unknown: num(m.n_unknown), not_checked: num(m.n_not_checked) },
    retriesPending: Math.max(0, num(m.retries)), createdAt: num(m.createdAt), startedAt: orNull(m.startedAt), finishedAt: orNull(m.finishedAt),
    expiresAt: num(m.expiresAt), webhookUrl: m.webhookUrl || null,
  };
}

/** Redis refused or did not answer: the API's 503 (JobStoreUnavailable), never a 500. */
async function reach<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw new JobStoreUnavailable(`Redis did not answer (${err instanceof Error ? err.message : String(err)})`, 5);
  }
}

/** What the store's functions share: the client, the queue, this process's BullMQ worker and the items it holds. */
interface Ctx {
  r: Redis;
  queue: Queue<ItemData>;
  worker(): Worker<ItemData>;
  /** The items this process holds: their BullMQ job and lock token, by `jobId:index`. */
  held: Map<string, { job: Job<ItemData>; token: string }>;
  /** The scripts as commands of `r`, by their text. */
  scripts: Map<string, (...keysThenArgs: Array<string | number>) => Promise<unknown>>;
}

/**
 * The store's Lua scripts defined on the client (ioredis's defineCommand): EVALSHA, the text sent only when Redis's
 * script cache lacks it (a restarted or promoted primary), not with every item (docs/adr/0046).
 */
function scriptsOf(r: Redis): Ctx['scripts'] {
  const texts = { ARRIVED, CLOSE_PAGE, DUE_HOOKS, END_EARLY, LEASE_EXPANSION, SETTLE, START };
  return new Map(
    Object.entries(texts).map(([name, lua]) => {
      r.defineCommand(`ej${name}`, { lua });
      return [lua, (r as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>)[`ej${name}`].bind(r)];
    }),
  );
}

const heldKey = (jobId: string, index: number) => `${jobId}:${index}`;
const run = (c: Ctx, script: string, keys: string[], args: Array<string | number>) => c.scripts.get(script)!(keys.length, ...keys, ...args);

/** Ends a job early (cancelled, failed) and writes a not_checked line for every item still without one. */
async function endEarly(c: Ctx, id: string, status: 'cancelled' | 'failed', reason: string, now: number): Promise<void> {
  if ((await run(c, END_EARLY, [k(id, 'meta'), OPEN, HOOKS], [id, status, now])) === 0) return;
  const total = num((await c.r.hget(k(id, 'meta'), 'total')) ?? undefined);
  for (let from = 0; from < total; from += PAGE) {
    const emails = await c.r.lrange(k(id, 'items'), from, from + PAGE - 1);
    await run(c, CLOSE_PAGE, [k(id, 'meta'), k(id, 'lines')], [from, reason, ...emails.map((e) => JSON.stringify(e))]);
    await turn();
  }
  await c.r.hset(k(id, 'meta'), 'remaining', 0);
}

function metaOf(job: NewJob, distinct: number): Record<string, string | number> {
  return {
    keyId: job.keyId, status: 'incoming', smtp: job.smtp ? '1' : '0', total: job.items.length, distinct, remaining: distinct, processed: 0,
    retries: 0, createdAt: job.createdAt, startedAt: '', finishedAt: '', expiresAt: job.expiresAt, webhookUrl: job.webhookUrl ?? '',
    webhookSecret: job.webhookSecret ?? '', webhookAttempts: 0,
  };
}

/**
 * The items as the service writes them: the list and the repeats' index (copies), a page per command. The BullMQ
 * items are a worker's to add (expand()): 60 µs and ~2 KB of objects an item, which grew the service's young
 * generation to its 128 MB bound during a 100,000-item submission (docs/adr/0038).
 */
async function writeItems(c: Ctx, job: NewJob, firstOf: Int32Array): Promise<void> {
  const id = job.id;
  const copies = new Map<number, string>();
  firstOf.forEach((first, i) => void (first !== i && copies.set(first, `${copies.has(first) ? `${copies.get(first)},` : ''}${i}`)));
  for (let from = 0; from < job.items.length; from += PAGE) await c.r.rpush(k(id, 'items'), ...job.items.slice(from, from + PAGE));
  const pairs = [...copies];
  for (let from = 0; from < pairs.length; from += PAGE) await c.r.hset(k(id, 'copies'), Object.fromEntries(pairs.slice(from, from + PAGE)));
  await c.r.multi().pexpireat(k(id, 'items'), job.expiresAt).pexpireat(k(id, 'copies'), job.expiresAt).exec();
}

/**
 * A queued job's BullMQ items, added by the worker that leased its expansion, a page at a time, grouped by domain
 * (BullMQ's wait list is first in, first out), the lease renewed and the position kept in `queuedUpTo` after each
 * page: a worker that dies half-way leaves the rest to the next (a page added twice is one BullMQ item per id; one
 * already finished and removed is checked again, and its line stays the first: SETTLE). Items of a job that ended
 * meanwhile are not added.
 */
async function expand(c: Ctx, now: number, leaseMs: number): Promise<void> {
  const id = (await run(c, LEASE_EXPANSION, [EXPANDING], [now, now + leaseMs])) as string | null;
  if (!id) return;
  const live = async () => ['queued', 'running'].includes((await c.r.hget(k(id, 'meta'), 'status')) ?? '');
  const [total, smtp, upTo] = await c.r.hmget(k(id, 'meta'), 'total', 'smtp', 'queuedUpTo');
  const items: string[] = [];
  for (let from = 0; (await live()) && from < num(total ?? undefined); from += 5000) items.push(...(await c.r.lrange(k(id, 'items'), from, from + 4999)));
  const firstOf = Int32Array.from(items, (_, i) => i);
  for (const [first, list] of Object.entries(await c.r.hgetall(k(id, 'copies')))) for (const i of list.split(',')) firstOf[Number(i)] = Number(first);
  const order = domainOrder(items, firstOf, RECIPIENTS_PER_SESSION);
  for (let from = num(upTo ?? undefined); from < order.length && (await live()); from += PAGE) {
    const batch = Array.from(order.subarray(from, from + PAGE), (i) => ({
      name: 'item', data: { jobId: id, index: i, email: items[i], smtp: smtp === '1', attempts: 0 }, opts: { jobId: `${id}-${i}`, removeOnComplete: true, removeOnFail: false },
    }));
    await c.queue.addBulk(batch);
    await c.r.multi().hset(k(id, 'meta'), 'queuedUpTo', from + PAGE).zadd(EXPANDING, Date.now() + leaseMs, id).exec();
  }
  await c.r.zrem(EXPANDING, id);
}

/** Items of queued jobs no worker has added to BullMQ yet: queued all the same (the stalled-jobs alert counts them). */
async function notYetQueued(c: Ctx): Promise<number> {
  let n = 0;
  // Every expanding job, a page of PAGE ids at a time (one pipelined HMGET each): a job on a later page counts too.
  for (let from = 0; ; from += PAGE) {
    const ids = await c.r.zrange(EXPANDING, String(from), String(from + PAGE - 1));
    const tx = c.r.pipeline();
    for (const id of ids) tx.hmget(k(id, 'meta'), 'distinct', 'queuedUpTo');
    for (const [err, v] of ids.length ? ((await tx.exec()) ?? []) : []) {
      if (err) throw err;
      const [distinct, upTo] = v as (string | null)[];
      n += Math.max(0, num(distinct ?? undefined) - num(upTo ?? undefined));
    }
    if (ids.length < PAGE) return n;
  }
}

/** A job's keys go; its items still in BullMQ then find no job and leave the queue unworked. */
async function dropJob(c: Ctx, id: string): Promise<void> {
  await c.r.multi().del(k(id, 'meta'), k(id, 'items'), k(id, 'copies'), k(id, 'lines')).zrem(INCOMING, id).zrem(EXPANDING, id).exec();
}

/**
 * The job's record first, `incoming` (hidden from the API, but a worker that claims one of its items finds it and
 * works it), then its items, then ARRIVED shows it: a worker never meets an item without its job (items written
 * first were dropped: docs/adr/0030), and a job whose writing stopped half-way is never shown, deleted here on an
 * error and by purge() after a crash. The lines' hash exists from the start (a placeholder field) to take its expiry.
 * Returns the job as queued, whatever a worker has done to it since.
 */
async function writeJob(c: Ctx, job: NewJob): Promise<Record<string, string>> {
  const { firstOf, distinct } = distinctItems(job.items);
  const id = job.id;
  const m = metaOf(job, distinct);
  await c.r
    .multi()
    .hset(k(id, 'meta'), m)
    .hset(k(id, 'lines'), '-1', '')
    .pexpireat(k(id, 'meta'), job.expiresAt)
    .pexpireat(k(id, 'lines'), job.expiresAt)
    .zadd(INCOMING, job.createdAt, id)
    .exec();
  try {
    await writeItems(c, job, firstOf);
    await run(c, ARRIVED, [k(id, 'meta'), OPEN, INCOMING, EXPANDING], [id]);
  } catch (err) {
    await dropJob(c, id).catch(() => undefined);
    throw err;
  }
  return Object.fromEntries(Object.entries({ ...m, status: 'queued' }).map(([field, v]) => [field, String(v)]));
}

/** The lines so far in submission order, a page of fields per HMGET. */
async function* readLines(c: Ctx, id: string, status: LineStatus | undefined): AsyncGenerator<ResultLine> {
  const total = num((await reach(c.r.hget(k(id, 'meta'), 'total'))) ?? undefined);
  for (let from = 0; from < total; from += PAGE) {
    const fields = Array.from({ length: Math.min(PAGE, total - from) }, (_, i) => String(from + i));
    for (const text of await reach(c.r.hmget(k(id, 'lines'), ...fields))) {
      if (text === null) continue;
      const line = JSON.parse(text) as ResultLine;
      if (!status || line.status === status) yield line;
    }
    await turn();
  }
}

/** One item from BullMQ, or null when none is waiting; an item of a job that ended or expired leaves the queue unworked. */
async function takeOne(c: Ctx, workerId: string, now: number): Promise<ClaimedItem | null | 'skipped'> {
  const token = `${workerId}:${randomUUID()}`;
  const job = (await c.worker().getNextJob(token, { block: false })) as Job<ItemData> | undefined;
  if (!job) return null;
  const d = job.data;
  if ((await run(c, START, [k(d.jobId, 'meta')], [now, d.attempts > 0 ? 1 : 0])) === 0) {
    await job.moveToCompleted(null, token, false).catch(() => undefined);
    return 'skipped';
  }
  c.held.set(heldKey(d.jobId, d.index), { job, token });
  return { jobId: d.jobId, index: d.index, email: d.email, smtp: d.smtp, attempts: d.attempts };
}

/**
 * Up to `max` items. After the first, the rest are asked for together: ioredis sends them as one pipeline and Redis
 * pops them in queue order, so a batch is one domain's run, one SMTP session (docs/adr/0046). A take that fails
 * (Redis gone mid-pipeline) ends the batch with the items already taken: worked now, not left locked until their
 * leases end, which would count a stall against each (MAX_STALLS); only a claim that took nothing throws.
 */
async function claimItems(c: Ctx, workerId: string, max: number, now: number, leaseMs: number): Promise<ClaimedItem[]> {
  await expand(c, now, leaseMs);
  const out: ClaimedItem[] = [];
  try {
    while (out.length < max) {
      const first = await takeOne(c, workerId, now);
      if (first === null) break;
      if (first === 'skipped') continue;
      out.push(first);
      const rest = await Promise.allSettled(Array.from({ length: max - out.length }, () => takeOne(c, workerId, now)));
      for (const r of rest) if (r.status === 'fulfilled' && r.value !== null && r.value !== 'skipped') out.push(r.value);
      // The queue is empty, or a take failed: the batch ends with what it holds (at least the first).
      if (rest.some((r) => r.status === 'rejected' || r.value === null)) break;
    }
  } catch (err) {
    if (out.length === 0) throw err;
  }
  return out;
}

/** An outcome of an item this process still holds: a retry (BullMQ's delayed set), or its line (written once). */
async function settleOne(c: Ctx, o: ItemOutcome, now: number): Promise<void> {
  const h = c.held.get(heldKey(o.jobId, o.index));
  if (!h) return;
  c.held.delete(heldKey(o.jobId, o.index));
  if (o.retryAt !== null) {
    await reach(h.job.updateData({ ...h.job.data, attempts: o.attempts }));
    await reach(c.r.hincrby(k(o.jobId, 'meta'), 'retries', 1));
    await reach(h.job.moveToDelayed(o.retryAt, h.token)).catch(() => undefined);
    return;
  }
  const rest = JSON.stringify({ email: h.job.data.email, attempts: o.attempts, status: o.status, reason: o.reason, result: o.result }).slice(1);
  // The line first (at most once), then the item leaves the queue: a crash between the two re-checks an item whose line exists.
  await reach(run(c, SETTLE, [k(o.jobId, 'meta'), k(o.jobId, 'lines'), k(o.jobId, 'copies'), OPEN, HOOKS], [o.jobId, o.index, rest, o.status, now]));
  await h.job.moveToCompleted(null, h.token, false).catch(() => undefined);
}

/** A batch's outcomes settled together (ioredis pipelines them), each item's steps in order; the first failure is thrown. */
async function settleItems(c: Ctx, outcomes: readonly ItemOutcome[], now: number): Promise<void> {
  const failed = (await Promise.allSettled(outcomes.map((o) => settleOne(c, o, now)))).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

async function dueHooks(c: Ctx, now: number, max: number, leaseMs: number): Promise<WebhookDue[]> {
  const ids = (await reach(run(c, DUE_HOOKS, [HOOKS], [now, max, now + leaseMs]))) as string[];
  const out: WebhookDue[] = [];
  for (const id of ids) {
    const m = await reach(c.r.hgetall(k(id, 'meta')));
    if (!m.webhookUrl) await reach(c.r.zrem(HOOKS, id)); // expired meanwhile
    else out.push({ jobId: id, url: m.webhookUrl, secret: m.webhookSecret, attempts: num(m.webhookAttempts), job: view(id, m) });
  }
  return out;
}

/**
 * Redis deletes an expired job's keys itself (PEXPIREAT): the indexes forget it here; a job a crash left half-written
 * goes; and the items BullMQ failed after MAX_STALLS stalls (their workers kept dying) fail their job.
 */
async function purge(c: Ctx, now: number): Promise<number> {
  let gone = 0;
  for (const id of await reach(c.r.zrangebyscore(INCOMING, '-inf', now - INCOMING_MAX_MS, 'LIMIT', 0, 100))) {
    await reach(dropJob(c, id)); // never shown: ARRIVED did not run
    gone += 1;
  }
  for (const id of await reach(c.r.zrange(OPEN, '0', '999'))) {
    if ((await reach(c.r.exists(k(id, 'meta')))) === 0) gone += await reach(c.r.zrem(OPEN, id));
  }
  for (const failed of await reach(c.queue.getFailed(0, 99))) {
    if (failed?.data) await reach(endEarly(c, failed.data.jobId, 'failed', 'job_failed', now));
    await failed?.remove().catch(() => undefined);
  }
  return gone;
}

export function createRedisJobStore(o: RedisJobStoreOptions): JobStore {
  const { client: r } = o;
  const queue = new Queue<ItemData>(QUEUE, { connection: o.queueConnection, prefix: 'ej:bull' });
  queue.on('error', () => undefined); // reconnects by itself; each command's failure is answered where it was made
  let worker: Worker<ItemData> | null = null;
  const c: Ctx = {
    r,
    queue,
    held: new Map(),
    scripts: scriptsOf(r),
    // Made at the first claim: a server with JOBS_WORKER=off never opens the blocking connection.
    worker() {
      if (worker) return worker;
      worker = new Worker<ItemData>(QUEUE, null, { connection: o.workerConnection(), prefix: 'ej:bull', lockDuration: o.leaseMs, maxStalledCount: MAX_STALLS, stalledInterval: Math.max(100, o.leaseMs / 2), autorun: false });
      worker.on('error', () => undefined);
      void worker.startStalledCheckTimer().catch(() => undefined);
      return worker;
    },
  };
  const meta = async (id: string, keyId: string, now: number) => {
    const m = await reach(r.hgetall(k(id, 'meta')));
    return m.keyId === keyId && m.status !== 'incoming' && num(m.expiresAt) > now ? m : null;
  };
  return {
    // The job as queued, not read back: its items are on the queue already and a worker may have started it (the 202 says queued).
    create: async (job) => view(job.id, await reach(writeJob(c, job))),
    get: async (id, keyId, now) => {
      const m = await meta(id, keyId, now);
      return m ? view(id, m) : null;
    },
    async cancel(id, keyId, now) {
      if (!(await meta(id, keyId, now))) return null;
      await reach(endEarly(c, id, 'cancelled', 'cancelled', now));
      return view(id, await reach(r.hgetall(k(id, 'meta'))));
    },
    results: (id, status) => readLines(c, id, status),
    claim: (workerId, max, now, leaseMs) => reach(claimItems(c, workerId, max, now, leaseMs)),
    async renew(_worker, items, until) {
      await Promise.all(items.map((i) => c.held.get(heldKey(i.jobId, i.index))).map((h) => h?.job.extendLock(h.token, Math.max(1, until - Date.now())).catch(() => undefined)));
    },
    settle: (_worker, outcomes, now) => settleItems(c, outcomes, now),
    dueWebhooks: (now, max, leaseMs) => dueHooks(c, now, max, leaseMs),
    async webhookTried(jobId, d) {
      const tx = r.multi().hincrby(k(jobId, 'meta'), 'webhookAttempts', 1);
      if (d.retryAt === null) tx.zrem(HOOKS, jobId);
      else tx.zadd(HOOKS, d.retryAt, jobId);
      await reach(tx.exec());
    },
    purgeExpired: (now) => purge(c, now),
    async stats() {
      const [counts, oldest, unqueued] = await reach(Promise.all([queue.getJobCounts('wait', 'delayed', 'prioritized'), r.zrange(OPEN, '0', '0', 'WITHSCORES'), notYetQueued(c)]));
      return { queuedItems: (counts.wait ?? 0) + (counts.prioritized ?? 0) + unqueued, retryItems: counts.delayed ?? 0, oldestQueuedAt: oldest.length ? Number(oldest[1]) : null };
    },
    async close() {
      await worker?.close().catch(() => undefined);
      await queue.close().catch(() => undefined);
    },
  };
}
