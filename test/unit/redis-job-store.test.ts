// The Redis job store (BullMQ on a real redis-server) under a worker that claims while a job is being written: no
// item is dropped, a half-written job is never shown, the items are handed out one domain after another, a claim
// that fails part-way keeps what it took (docs/adr/0046), and a job's BullMQ items that one worker failed to add are
// added by another (docs/adr/0038).
// @module-tag slow (left out of make test-fast): starts redis-server
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimedItem, JobStore, NewJob } from '../../src/adapters/jobs/job-store.js';
import { createRedisJobStore } from '../../src/adapters/jobs/redis-job-store.js';
import { COMMAND_TIMEOUT_MS, redisAvailable, startRedisServer, type TestRedis } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const HAVE_REDIS = redisAvailable();

describe.skipIf(!HAVE_REDIS)('Redis job store (real redis-server)', () => {
  let redis: TestRedis;
  const closers: Array<() => Promise<void> | void> = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /** A store on its own connections, as in one process (the service or a job worker). */
  function store(leaseMs = 30_000, db = 0): JobStore & { client: Redis; queueConnection: Redis } {
    const conns = [0, 1, 2].map(() => new Redis(redis.url, { db, commandTimeout: COMMAND_TIMEOUT_MS, maxRetriesPerRequest: null }));
    const s = createRedisJobStore({ client: conns[0], queueConnection: conns[1], workerConnection: () => conns[2], leaseMs });
    closers.push(async () => {
      await s.close();
      conns.forEach((c) => c.disconnect());
    });
    return Object.assign(s, { client: conns[0], queueConnection: conns[1] });
  }

  const newJob = (items: string[]): NewJob => {
    const now = Date.now();
    return { id: `race-${now}-${Math.random()}`, keyId: 'k1', items, smtp: false, webhookUrl: null, webhookSecret: null, createdAt: now, expiresAt: now + 3600_000 };
  };

  const deliverable = (i: ClaimedItem) => ({ jobId: i.jobId, index: i.index, attempts: 1, status: 'deliverable' as const, reason: 'accepted', result: null, retryAt: null });

  /** Claims and settles (as deliverable) in a tight loop until `written` has resolved and the queue is empty. */
  async function claimer(s: JobStore, written: Promise<unknown>, seen: ClaimedItem[][]): Promise<void> {
    let done = false;
    void written.finally(() => (done = true));
    for (;;) {
      const finished = done;
      const items = await s.claim('w1', 20, Date.now(), 30_000);
      if (items.length === 0 && finished) return;
      if (items.length > 0) seen.push(items);
      await s.settle('w1', items.map(deliverable), Date.now());
    }
  }

  it('a worker claiming while a big job is written drops no item: the job completes with every line once', async () => {
    const writer = store();
    const worker = store();
    const items = Array.from({ length: 12_000 }, (_, i) => `u${i}@d${i % 60}.test`);
    items.push(items[5], items[7]); // repeats get their first's line
    const job = newJob(items);
    const seen: ClaimedItem[][] = [];
    const created = writer.create(job);
    await Promise.all([created, claimer(worker, created, seen)]);
    const view = await writer.get(job.id, 'k1', Date.now());
    expect(view).toMatchObject({ status: 'completed', total: items.length, processed: items.length });
    const lines: number[] = [];
    for await (const l of writer.results(job.id, undefined)) lines.push(l.index);
    expect(lines).toEqual(items.map((_, i) => i));
  });

  it("sends its scripts by digest (EVALSHA): a job's items cost no EVAL once Redis has them, and a flushed script cache is refilled", async () => {
    const s = store();
    const calls = async (cmd: string) => Number(new RegExp(`^cmdstat_${cmd}:calls=(\\d+)`, 'm').exec(await s.client.info('commandstats'))?.[1] ?? 0);
    const run = async (n: number) => {
      const job = newJob(Array.from({ length: n }, (_, i) => `s${i}@d${i % 3}.test`));
      await s.create(job);
      await claimer(s, Promise.resolve(), []);
      expect(await s.get(job.id, 'k1', Date.now())).toMatchObject({ status: 'completed', processed: n });
    };
    await run(5); // each script's text once, at its first call
    await s.client.config('RESETSTAT');
    await run(60);
    expect(await calls('eval')).toBe(0);
    expect(await calls('evalsha')).toBeGreaterThan(120); // a START and a SETTLE per item
    await s.client.script('FLUSH'); // as on a restarted or promoted primary
    await run(5);
  });

  it('hands out the items one domain after another, so that a batch shares its SMTP sessions', async () => {
    const s = store();
    const items = Array.from({ length: 200 }, (_, i) => `u${i}@d${i % 10}.test`);
    await s.create(newJob(items));
    const seen: ClaimedItem[][] = [];
    await claimer(s, Promise.resolve(), seen);
    // 20 items of each of 10 domains, claimed 20 at a time: one domain a batch.
    expect(seen.map((batch) => new Set(batch.map((i) => i.email.split('@')[1])).size)).toEqual(Array(10).fill(1));
  });

  it('a job whose items could not all be written is never shown and leaves nothing behind', async () => {
    const raw = new Redis(redis.url);
    closers.push(() => raw.disconnect());
    const job = newJob(['a@d1.test', 'b@d2.test']);
    const s = store();
    s.client.rpush = (() => Promise.reject(new Error('connection lost'))) as never; // Redis lost after the job's record
    await expect(s.create(job)).rejects.toThrow(/Redis did not answer/);
    expect(await store().get(job.id, 'k1', Date.now())).toBeNull();
    expect(await raw.keys(`ej:{${job.id}}:*`)).toEqual([]);
    expect(await raw.zscore('ej:incoming', job.id)).toBeNull();
  });

  it('a claim whose later takes fail keeps the items it took: they are worked now, not locked until their leases end', async () => {
    const s = store(30_000, 1); // a database of its own: the broken job's items stay taken
    const good = newJob(['a0@d.test', 'a1@d.test', 'a2@d.test']);
    const broken = newJob(['b0@e.test', 'b1@e.test']);
    for (const job of [good, broken]) {
      await s.create(job);
      await s.claim('w1', 0, Date.now(), 30_000); // a claim adds a job's items to BullMQ: the good job's first
    }
    // Each take runs a script on its job's record; a record of the wrong type makes those takes fail, as a Redis
    // that goes away mid-pipeline would.
    await s.client.set(`ej:{${broken.id}}:meta`, 'not a hash');
    const items = await s.claim('w1', 20, Date.now(), 30_000);
    expect(items.map((i) => [i.jobId, i.index])).toEqual([0, 1, 2].map((i) => [good.id, i]));
    await s.settle('w1', items.map(deliverable), Date.now());
    expect(await s.get(good.id, 'k1', Date.now())).toMatchObject({ status: 'completed', processed: 3 });
  });

  it('counts a queued job\'s items as queued before a worker has added them to BullMQ, and after', async () => {
    const s = store();
    const before = (await s.stats(Date.now())).queuedItems;
    await s.create(newJob(['a@d1.test', 'b@d1.test', 'a@d1.test']));
    expect((await s.stats(Date.now())).queuedItems).toBe(before + 2); // two distinct addresses, none added yet
    const claimed = await s.claim('w1', 1, Date.now(), 30_000); // adds both, takes one
    expect(claimed).toHaveLength(1);
    expect((await s.stats(Date.now())).queuedItems).toBe(before + 1);
    await s.settle('w1', claimed.map(deliverable), Date.now());
    await claimer(s, Promise.resolve(), []); // the queue left empty for the next test
  });

  it('counts the items of every job not yet added to BullMQ, past the first hundred such jobs too', async () => {
    const s = store();
    const before = (await s.stats(Date.now())).queuedItems;
    for (let j = 0; j < 130; j++) await s.create(newJob([`a${j}@d1.test`, `b${j}@d2.test`]));
    expect((await s.stats(Date.now())).queuedItems).toBe(before + 260);
    await claimer(s, Promise.resolve(), []); // the queue left empty for the next test
    expect((await s.stats(Date.now())).queuedItems).toBe(0);
  });

  it('the BullMQ items of a job a worker failed to queue are queued by another once its lease ends', async () => {
    const items = Array.from({ length: 1200 }, (_, i) => `u${i}@d${i % 30}.test`);
    const job = newJob(items);
    await store().create(job);
    const lost = store(300);
    await lost.queueConnection.ping();
    lost.queueConnection.disconnect(); // this worker leases the job's queueing, then cannot add its items
    await expect(lost.claim('w0', 20, Date.now(), 300)).rejects.toThrow(/Redis did not answer/);
    const worker = store(300);
    // Nothing to claim until the lost worker's lease ends; then this worker queues the items and claims the first.
    const first = await waitFor(async () => {
      const got = await worker.claim('w1', 20, Date.now(), 300);
      return got.length > 0 ? got : null;
    });
    await worker.settle('w1', first.map(deliverable), Date.now());
    const seen: ClaimedItem[][] = [first];
    await claimer(worker, Promise.resolve(), seen);
    expect(seen.flat().map((i) => i.index).sort((a, b) => a - b)).toEqual(items.map((_, i) => i));
    expect(await worker.get(job.id, 'k1', Date.now())).toMatchObject({ status: 'completed', processed: items.length });
  });
});
