// The job queue on Redis (REDIS_URL; docs/adr/0030): BullMQ holds the distinct items (one BullMQ job each, taken by
// manual fetching with a lock per item, stalled items requeued by BullMQ), Redis hashes hold each job's status and
// its lines, each line written at most once (HSETNX): every item appears exactly once, whichever worker finishes it.
import { randomUUID } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { distinctItems } from '../../domain/job-items.js';
import { JobStoreUnavailable, type ClaimedItem, type JobStore, type JobView, type ResultLine } from './job-store.js';
import { CLOSE_PAGE, DUE_HOOKS, END_EARLY, SETTLE, START } from './redis-job-scripts.js';

/** A BullMQ item stalled (its worker gone) this often fails its job (as MAX_CLAIMS does on the embedded queue). */
const MAX_STALLS = 5;
const QUEUE = 'email-items';
const PAGE = 500;
const OPEN = 'ej:open';
const HOOKS = 'ej:webhooks';
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
  /** ioredis options of the connections BullMQ opens itself: the queue's (failing fast) and the worker's (blocking). */
  queueConnection: Record<string, unknown>;
  workerConnection: Record<string, unknown>;
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

export function createRedisJobStore(o: RedisJobStoreOptions): JobStore {
  const { client: r } = o;
  const queue = new Queue<ItemData>(QUEUE, { connection: o.queueConnection as never, prefix: 'ej:bull' });
  queue.on('error', () => undefined); // reconnects by itself; each command's failure is answered where it was made
  let worker: Worker<ItemData> | null = null;
  /** The items this process holds: their BullMQ job and lock token. */
  const held = new Map<string, { job: Job<ItemData>; token: string }>();
  const heldKey = (jobId: string, index: number) => `${jobId}:${index}`;
  const eval_ = (script: string, keys: string[], args: Array<string | number>) => r.eval(script, keys.length, ...keys, ...args) as Promise<unknown>;

  const workerNow = (): Worker<ItemData> => {
    if (worker) return worker;
    worker = new Worker<ItemData>(QUEUE, null, { connection: o.workerConnection as never, prefix: 'ej:bull', lockDuration: o.leaseMs, maxStalledCount: MAX_STALLS, stalledInterval: Math.max(100, o.leaseMs / 2), autorun: false });
    worker.on('error', () => undefined);
    void worker.startStalledCheckTimer().catch(() => undefined);
    return worker;
  };

  /** Ends a job early (cancelled, failed) and writes a not_checked line for every item still without one. */
  async function endEarly(id: string, status: 'cancelled' | 'failed', reason: string, now: number): Promise<void> {
    if ((await eval_(END_EARLY, [k(id, 'meta'), OPEN, HOOKS], [id, status, now])) === 0) return;
    const total = num((await r.hget(k(id, 'meta'), 'total')) ?? undefined);
    for (let from = 0; from < total; from += PAGE) {
      const emails = await r.lrange(k(id, 'items'), from, from + PAGE - 1);
      await eval_(CLOSE_PAGE, [k(id, 'meta'), k(id, 'lines')], [from, reason, ...emails.map((e) => JSON.stringify(e))]);
      await turn();
    }
    await r.hset(k(id, 'meta'), 'remaining', 0);
  }

  const meta = async (id: string, keyId: string, now: number) => {
    const m = await reach(r.hgetall(k(id, 'meta')));
    return m.keyId === keyId && num(m.expiresAt) > now ? m : null;
  };

  return {
    async create(job) {
      const { firstOf, distinct } = distinctItems(job.items);
      const copies = new Map<number, number[]>();
      firstOf.forEach((first, i) => void (first !== i && copies.set(first, [...(copies.get(first) ?? []), i])));
      const id = job.id;
      await reach(
        (async () => {
          for (let from = 0; from < job.items.length; from += 10_000) await r.rpush(k(id, 'items'), ...job.items.slice(from, from + 10_000));
          if (copies.size) await r.hset(k(id, 'copies'), Object.fromEntries([...copies].map(([f, c]) => [f, c.join(',')])));
          for (let from = 0; from < job.items.length; from += 1000) {
            const batch = [];
            for (let i = from; i < Math.min(job.items.length, from + 1000); i++) {
              if (firstOf[i] !== i) continue;
              const data: ItemData = { jobId: id, index: i, email: job.items[i], smtp: job.smtp, attempts: 0 };
              batch.push({ name: 'item', data, opts: { jobId: `${id}-${i}`, removeOnComplete: true, removeOnFail: false } });
            }
            await queue.addBulk(batch);
          }
          const m = {
            keyId: job.keyId, status: 'queued', smtp: job.smtp ? '1' : '0', total: job.items.length, distinct, remaining: distinct, processed: 0,
            retries: 0, createdAt: job.createdAt, startedAt: '', finishedAt: '', expiresAt: job.expiresAt, webhookUrl: job.webhookUrl ?? '',
            webhookSecret: job.webhookSecret ?? '', webhookAttempts: 0,
          };
          const tx = r.multi().hset(k(id, 'meta'), m).zadd(OPEN, job.createdAt, id);
          for (const part of ['meta', 'items', 'copies', 'lines']) tx.pexpireat(k(id, part), job.expiresAt);
          await tx.exec();
        })(),
      );
      return view(id, await reach(r.hgetall(k(id, 'meta'))));
    },

    async get(id, keyId, now) {
      const m = await meta(id, keyId, now);
      return m ? view(id, m) : null;
    },

    async cancel(id, keyId, now) {
      if (!(await meta(id, keyId, now))) return null;
      await reach(endEarly(id, 'cancelled', 'cancelled', now));
      return view(id, await reach(r.hgetall(k(id, 'meta'))));
    },

    async *results(id, status) {
      const total = num((await reach(r.hget(k(id, 'meta'), 'total'))) ?? undefined);
      for (let from = 0; from < total; from += PAGE) {
        const fields = Array.from({ length: Math.min(PAGE, total - from) }, (_, i) => String(from + i));
        const lines = await reach(r.hmget(k(id, 'lines'), ...fields));
        for (const text of lines) {
          if (text === null) continue;
          const line = JSON.parse(text) as ResultLine;
          if (!status || line.status === status) yield line;
        }
        await turn();
      }
    },

    async claim(workerId, max, now) {
      const w = workerNow();
      const out: ClaimedItem[] = [];
      await reach(
        (async () => {
          while (out.length < max) {
            const token = `${workerId}:${randomUUID()}`;
            const job = (await w.getNextJob(token, { block: false })) as Job<ItemData> | undefined;
            if (!job) break;
            const d = job.data;
            if ((await eval_(START, [k(d.jobId, 'meta')], [now, d.attempts > 0 ? 1 : 0])) === 0) {
              await job.moveToCompleted(null, token, false).catch(() => undefined); // its job ended or expired
              continue;
            }
            held.set(heldKey(d.jobId, d.index), { job, token });
            out.push({ jobId: d.jobId, index: d.index, email: d.email, smtp: d.smtp, attempts: d.attempts });
          }
        })(),
      );
      return out;
    },

    async renew(_worker, items, until) {
      await Promise.all(items.map((i) => held.get(heldKey(i.jobId, i.index))?.job.extendLock(held.get(heldKey(i.jobId, i.index))!.token, Math.max(1, until - Date.now())).catch(() => undefined)));
    },

    async settle(_worker, outcomes, now) {
      for (const o of outcomes) {
        const h = held.get(heldKey(o.jobId, o.index));
        if (!h) continue;
        held.delete(heldKey(o.jobId, o.index));
        if (o.retryAt !== null) {
          await reach(h.job.updateData({ ...h.job.data, attempts: o.attempts }));
          await reach(r.hincrby(k(o.jobId, 'meta'), 'retries', 1));
          await reach(h.job.moveToDelayed(o.retryAt, h.token)).catch(() => undefined);
          continue;
        }
        const rest = JSON.stringify({ email: h.job.data.email, attempts: o.attempts, status: o.status, reason: o.reason, result: o.result }).slice(1);
        // The line first (at most once), then the item leaves the queue: a crash between the two re-checks an item whose line exists.
        await reach(eval_(SETTLE, [k(o.jobId, 'meta'), k(o.jobId, 'lines'), k(o.jobId, 'copies'), OPEN, HOOKS], [o.jobId, o.index, rest, o.status, now]));
        await h.job.moveToCompleted(null, h.token, false).catch(() => undefined);
      }
    },

    async dueWebhooks(now, max, leaseMs) {
      const ids = (await reach(eval_(DUE_HOOKS, [HOOKS], [now, max, now + leaseMs]))) as string[];
      const out = [];
      for (const id of ids) {
        const m = await reach(r.hgetall(k(id, 'meta')));
        if (!m.webhookUrl) {
          await reach(r.zrem(HOOKS, id)); // expired meanwhile
          continue;
        }
        out.push({ jobId: id, url: m.webhookUrl, secret: m.webhookSecret, attempts: num(m.webhookAttempts), job: view(id, m) });
      }
      return out;
    },

    async webhookTried(jobId, o) {
      const tx = r.multi().hincrby(k(jobId, 'meta'), 'webhookAttempts', 1);
      if (o.retryAt === null) tx.zrem(HOOKS, jobId);
      else tx.zadd(HOOKS, o.retryAt, jobId);
      await reach(tx.exec());
    },

    async purgeExpired(now) {
      // Redis deletes an expired job's keys itself (PEXPIREAT); here the indexes forget it, and items BullMQ failed
      // after MAX_STALLS stalls (their workers kept dying) fail their job.
      let gone = 0;
      for (const id of await reach(r.zrange(OPEN, '0', '999'))) {
        if ((await reach(r.exists(k(id, 'meta')))) === 0) gone += await reach(r.zrem(OPEN, id));
      }
      for (const failed of await reach(queue.getFailed(0, 99))) {
        if (failed?.data) await reach(endEarly(failed.data.jobId, 'failed', 'job_failed', now));
        await failed?.remove().catch(() => undefined);
      }
      return gone;
    },

    async stats(now) {
      const [counts, oldest] = await reach(Promise.all([queue.getJobCounts('wait', 'delayed', 'prioritized'), r.zrange(OPEN, '0', '0', 'WITHSCORES')]));
      void now;
      return { queuedItems: (counts.wait ?? 0) + (counts.prioritized ?? 0), retryItems: counts.delayed ?? 0, oldestQueuedAt: oldest.length ? Number(oldest[1]) : null };
    },

    async close() {
      await worker?.close().catch(() => undefined);
      await queue.close().catch(() => undefined);
    },
  };
}

