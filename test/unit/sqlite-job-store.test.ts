// The embedded job queue (src/adapters/jobs/sqlite-job-store.ts) on a real SQLite file, called on this thread and
// through its own thread (threaded-job-store.ts, as the service runs it): repeated items stored once, leases taken
// over after a crash, one line per item whatever happens, results in submission order while the job runs,
// cancellation, expiry, and a lock held by another process answered at once (never waited for).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobStoreUnavailable, type ItemOutcome, type JobStore, type ResultLine } from '../../src/adapters/jobs/job-store.js';
import { MAX_CLAIMS, createSqliteJobStore } from '../../src/adapters/jobs/sqlite-job-store.js';
import { openThreadedSqliteJobStore } from '../../src/adapters/jobs/threaded-job-store.js';
import { ConfigError } from '../../src/errors.js';
import { waitFor } from '../support/wait.js';

let dir: string;
let store: JobStore;
const T0 = 1_700_000_000_000;
const LEASE = 1000;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'jobs-store-'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const submit = (items: string[], id = 'job_a', keyId = 'key1') =>
  store.create({ id, keyId, items, smtp: false, webhookUrl: null, webhookSecret: null, createdAt: T0, expiresAt: T0 + 3_600_000 });
const lines = async (id = 'job_a', status?: ResultLine['status']) => {
  const out: ResultLine[] = [];
  for await (const l of store.results(id, status)) out.push(l);
  return out;
};
const answered = (jobId: string, index: number, status: ItemOutcome['status'] = 'deliverable', attempts = 1): ItemOutcome => ({
  jobId, index, attempts, status, reason: status === 'deliverable' ? 'accepted' : 'not_requested', result: { n: index }, retryAt: null,
});

const forms: Array<[string, (dir: string) => JobStore | Promise<JobStore>]> = [
  ['on the calling thread', createSqliteJobStore],
  ['in its own thread', openThreadedSqliteJobStore],
];

describe.each(forms)('the embedded job store %s', (_, open) => {
  beforeEach(async () => {
    store = await open(dir);
  });

  it('stores repeated items once: one claim, and every copy gets the line of its first occurrence', async () => {
    const job = await submit(['a@x.test', 'b@x.test', 'a@x.test', 'c@x.test', 'a@x.test']);
    expect(job).toMatchObject({ status: 'queued', total: 5, distinct: 3, processed: 0 });
    const claimed = await store.claim('w1', 10, T0, LEASE);
    expect(claimed.map((c) => c.email)).toEqual(['a@x.test', 'b@x.test', 'c@x.test']);
    await store.settle('w1', claimed.map((c) => answered(c.jobId, c.index)), T0 + 1);
    expect((await lines()).map((l) => [l.index, l.email])).toEqual([[0, 'a@x.test'], [1, 'b@x.test'], [2, 'a@x.test'], [3, 'c@x.test'], [4, 'a@x.test']]);
    expect(await store.get('job_a', 'key1', T0 + 2)).toMatchObject({ status: 'completed', processed: 5, counts: { deliverable: 5 }, finishedAt: T0 + 1 });
  });

  it('streams the lines finished so far in submission order while the job runs, and filters by status', async () => {
    await submit(['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test']);
    const claimed = await store.claim('w1', 10, T0, LEASE);
    await store.settle('w1', [answered('job_a', 3, 'not_checked'), answered('job_a', 1)], T0 + 1);
    expect((await lines()).map((l) => l.index)).toEqual([1, 3]);
    expect((await lines('job_a', 'not_checked')).map((l) => l.index)).toEqual([3]);
    expect(await store.get('job_a', 'key1', T0)).toMatchObject({ status: 'running', processed: 2, startedAt: T0 });
    expect(claimed).toHaveLength(4);
  });

  it('hands the items out one domain after another (a batch shares SMTP sessions); the lines stay in submission order', async () => {
    const items = Array.from({ length: 60 }, (_, i) => `u${i}@D${i % 3}.test`.replace('D', i % 2 ? 'D' : 'd'));
    await submit(items);
    const batches = [0, 1, 2].map(() => store.claim('w1', 20, T0, LEASE));
    const domains = (await Promise.all(batches)).map((b) => new Set(b.map((c) => c.email.split('@')[1].toLowerCase())));
    expect(domains).toEqual([new Set(['d0.test']), new Set(['d1.test']), new Set(['d2.test'])]);
    await store.settle('w1', items.map((_, i) => answered('job_a', i)), T0 + 1);
    expect((await lines()).map((l) => l.index)).toEqual(items.map((_, i) => i));
  });

  it('claims from a file made before the claiming order was kept (no seq column)', async () => {
    await store.close();
    const old = new Database(join(dir, 'jobs.db'));
    old.exec('DROP INDEX job_items_claim; ALTER TABLE job_items DROP COLUMN seq');
    old.close();
    store = await open(dir);
    await submit(['a@x.test', 'b@y.test', 'c@x.test']);
    expect((await store.claim('w1', 10, T0, LEASE)).map((c) => c.email)).toEqual(['a@x.test', 'c@x.test', 'b@y.test']);
  });

  it('reads a long job a page at a time, every index once and in order', async () => {
    const items = Array.from({ length: 1203 }, (_, i) => `u${i}@x.test`);
    await submit(items);
    const claimed = await store.claim('w1', 2000, T0, LEASE);
    await store.settle('w1', claimed.map((c) => answered(c.jobId, c.index)), T0 + 1);
    expect((await lines()).map((l) => l.index)).toEqual(items.map((_, i) => i));
  });

  it("hands a crashed worker's items to another once the lease ends; the first worker's late outcome is dropped", async () => {
    await submit(['a@x.test', 'b@x.test']);
    const first = await store.claim('dead', 10, T0, LEASE);
    expect(first).toHaveLength(2);
    expect(await store.claim('w2', 10, T0 + LEASE - 1, LEASE)).toEqual([]);
    const taken = await store.claim('w2', 10, T0 + LEASE, LEASE);
    expect(taken.map((c) => c.index)).toEqual([0, 1]);
    await store.settle('w2', taken.map((c) => answered(c.jobId, c.index)), T0 + LEASE + 1);
    await store.settle('dead', first.map((c) => answered(c.jobId, c.index, 'not_checked')), T0 + LEASE + 2);
    const out = await lines();
    expect(out.map((l) => [l.index, l.status])).toEqual([[0, 'deliverable'], [1, 'deliverable']]);
    expect(await store.get('job_a', 'key1', T0 + LEASE + 3)).toMatchObject({ processed: 2, counts: { deliverable: 2, not_checked: 0 } });
  });

  it('a renewed lease is not taken over', async () => {
    await submit(['a@x.test']);
    const mine = await store.claim('w1', 10, T0, LEASE);
    await store.renew('w1', mine, T0 + 5 * LEASE);
    expect(await store.claim('w2', 10, T0 + 2 * LEASE, LEASE)).toEqual([]);
  });

  it(`fails the job when an item's lease ran out ${MAX_CLAIMS} times: its items without a line become not_checked/job_failed`, async () => {
    await submit(['poison@x.test', 'b@x.test']);
    let now = T0;
    expect((await store.claim('w', 2, now, LEASE)).map((c) => c.index)).toEqual([0, 1]);
    await store.settle('w', [answered('job_a', 1)], now);
    for (let i = 1; i < MAX_CLAIMS; i++) expect((await store.claim(`w${i}`, 10, (now += LEASE), LEASE)).map((c) => c.index)).toEqual([0]);
    expect(await store.claim('next', 10, (now += LEASE), LEASE)).toEqual([]);
    expect(await store.get('job_a', 'key1', now)).toMatchObject({ status: 'failed', processed: 2, counts: { deliverable: 1, not_checked: 1 } });
    expect((await lines()).map((l) => [l.index, l.status, l.reason, l.result])).toEqual([[0, 'not_checked', 'job_failed', null], [1, 'deliverable', 'accepted', { n: 1 }]]);
  });

  it('schedules a retry: the item is due again at retryAt, counted in retriesPending until taken', async () => {
    await submit(['grey@x.test']);
    const [item] = await store.claim('w1', 10, T0, LEASE);
    await store.settle('w1', [{ ...answered('job_a', 0, 'unknown'), retryAt: T0 + 5000 }], T0 + 1);
    expect(await store.get('job_a', 'key1', T0 + 2)).toMatchObject({ status: 'running', processed: 0, retriesPending: 1 });
    expect(await store.claim('w1', 10, T0 + 4999, LEASE)).toEqual([]);
    const [again] = await store.claim('w1', 10, T0 + 5000, LEASE);
    expect(again).toMatchObject({ index: item.index, attempts: 1 });
    expect((await store.get('job_a', 'key1', T0 + 5000))!.retriesPending).toBe(0);
  });

  it('cancels: every item without a line gets not_checked/cancelled, lines made before stay, a late outcome is dropped', async () => {
    await submit(['a@x.test', 'b@x.test', 'b@x.test', 'c@x.test']);
    const claimed = await store.claim('w1', 10, T0, LEASE);
    await store.settle('w1', [answered('job_a', 0)], T0 + 1);
    const cancelled = await store.cancel('job_a', 'key1', T0 + 2);
    expect(cancelled).toMatchObject({ status: 'cancelled', processed: 4, counts: { deliverable: 1, not_checked: 3 }, finishedAt: T0 + 2 });
    await store.settle('w1', claimed.map((c) => answered(c.jobId, c.index)), T0 + 3);
    expect((await lines()).map((l) => [l.index, l.status, l.reason])).toEqual([
      [0, 'deliverable', 'accepted'], [1, 'not_checked', 'cancelled'], [2, 'not_checked', 'cancelled'], [3, 'not_checked', 'cancelled'],
    ]);
    expect(await store.cancel('job_a', 'key1', T0 + 4)).toMatchObject({ status: 'cancelled', finishedAt: T0 + 2 });
  });

  it("shows a job to its own key only, and to nobody once expired; purging deletes it", async () => {
    await submit(['a@x.test']);
    expect(await store.get('job_a', 'other', T0)).toBeNull();
    expect(await store.cancel('job_a', 'other', T0)).toBeNull();
    expect(await store.get('job_a', 'key1', T0 + 3_600_000)).toBeNull();
    expect(await store.purgeExpired(T0 + 3_600_000)).toBe(1);
    expect(await lines()).toEqual([]);
    expect(await store.claim('w1', 10, T0 + 3_600_000, LEASE)).toEqual([]);
  });

  it('survives a restart: a new store on the same directory has the job and its lines', async () => {
    await submit(['a@x.test', 'b@x.test']);
    const claimed = await store.claim('w1', 1, T0, LEASE);
    await store.settle('w1', [answered('job_a', claimed[0].index)], T0 + 1);
    await store.close();
    store = await open(dir);
    expect(await store.get('job_a', 'key1', T0 + 2)).toMatchObject({ status: 'running', processed: 1 });
    expect((await store.claim('w2', 10, T0 + 2, LEASE)).map((c) => c.index)).toEqual([1]);
  });

  it('answers at once while another process holds the write lock (JobStoreUnavailable), and reads on', async () => {
    await submit(['a@x.test']);
    const other = new Database(join(dir, 'jobs.db'));
    other.exec('BEGIN IMMEDIATE');
    try {
      await expect(submit(['b@x.test'], 'job_b')).rejects.toBeInstanceOf(JobStoreUnavailable);
      await expect(store.claim('w1', 10, T0, LEASE)).rejects.toBeInstanceOf(JobStoreUnavailable);
      expect(await store.get('job_a', 'key1', T0)).toMatchObject({ status: 'queued' });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(await submit(['b@x.test'], 'job_b')).toMatchObject({ status: 'queued' });
  });

  it('delivers each ended job webhook under a lease, and records retries and the end', async () => {
    await store.create({ id: 'job_w', keyId: 'k', items: ['a@x.test'], smtp: false, webhookUrl: 'http://127.0.0.1:1/h', webhookSecret: 'whsec_AAAA', createdAt: T0, expiresAt: T0 + 3_600_000 });
    expect(await store.dueWebhooks(T0, 10, LEASE)).toEqual([]);
    const [c] = await store.claim('w1', 10, T0, LEASE);
    await store.settle('w1', [answered(c.jobId, c.index)], T0 + 1);
    const [due] = await store.dueWebhooks(T0 + 1, 10, LEASE);
    expect(due).toMatchObject({ jobId: 'job_w', url: 'http://127.0.0.1:1/h', secret: 'whsec_AAAA', attempts: 0, job: { status: 'completed' } });
    expect(await store.dueWebhooks(T0 + 2, 10, LEASE)).toEqual([]);
    await store.webhookTried('job_w', { delivered: false, retryAt: T0 + 100 });
    expect((await store.dueWebhooks(T0 + 100, 10, LEASE))[0].attempts).toBe(1);
    await store.webhookTried('job_w', { delivered: true, retryAt: null });
    expect(await store.dueWebhooks(T0 + 10 * LEASE, 10, LEASE)).toEqual([]);
  });
});

// The chunks between which the event loop turns are the store's own (its thread runs the same code).
describe('a job as it arrives', () => {
  beforeEach(() => {
    store = createSqliteJobStore(dir);
  });

  it('is written a chunk at a time and seen by no one (status, claims) until all of it is in', async () => {
    const items = Array.from({ length: 4500 }, (_, i) => `u${i}@x.test`);
    const creating = submit(items);
    // The first chunk is in, the event loop turns: the job is not visible yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.get('job_a', 'key1', T0)).toBeNull();
    expect(await store.claim('w1', 10, T0, LEASE)).toEqual([]);
    expect(await creating).toMatchObject({ status: 'queued', total: 4500 });
    expect(await store.claim('w1', 10, T0, LEASE)).toHaveLength(10);
  });

  it('a job that cannot be written whole is never queued and is purged; the error reaches the caller', async () => {
    const other = new Database(join(dir, 'jobs.db'));
    const items = Array.from({ length: 4500 }, (_, i) => `u${i}@x.test`);
    const creating = submit(items);
    await new Promise((resolve) => setImmediate(resolve));
    other.exec('BEGIN IMMEDIATE');
    try {
      await expect(creating).rejects.toBeInstanceOf(JobStoreUnavailable);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Never queued: no worker takes its items; marked dropped when the lock allowed it, else purged an hour later.
    expect(await store.claim('w1', 10, T0, LEASE)).toEqual([]);
    expect(await store.get('job_a', 'key1', T0)).toBeNull();
    expect(await store.purgeExpired(T0 + 3_600_000)).toBe(1);
  });
});

describe('the job store with its writes in a thread', () => {
  let threads: Worker[];
  beforeEach(() => {
    threads = [];
    store = openThreadedSqliteJobStore(dir, (w) => threads.push(w));
  });

  it('refuses a DATA_DIR it cannot open as the service start-up does (ConfigError naming DATA_DIR)', () => {
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, '');
    expect(() => openThreadedSqliteJobStore(file)).toThrow(ConfigError);
    expect(() => openThreadedSqliteJobStore(file)).toThrow(/^DATA_DIR: /);
  });

  it("starts no thread while there is nothing to do (an idle service's polls, a stranger's cancel), and one with the first job", async () => {
    expect(await store.claim('w1', 20, T0, LEASE)).toEqual([]);
    expect(await store.dueWebhooks(T0, 10, LEASE)).toEqual([]);
    expect(await store.purgeExpired(T0)).toBe(0);
    expect(await store.stats(T0)).toEqual({ queuedItems: 0, retryItems: 0, oldestQueuedAt: null });
    expect(await store.cancel('job_none', 'key1', T0)).toBeNull();
    expect(threads).toHaveLength(0);
    await submit(['a@x.test']);
    expect(await store.cancel('job_a', 'another key', T0)).toBeNull();
    expect(threads).toHaveLength(1);
    expect(await store.claim('w1', 20, T0, LEASE)).toHaveLength(1);
    expect(threads).toHaveLength(1);
  });

  it('asks each poll its own question: a cancelled job past its expiry starts the thread for the purge, not for the claim or webhook polls', async () => {
    const before = createSqliteJobStore(dir); // a job written before this start, by another process
    await before.create({ id: 'job_a', keyId: 'key1', items: ['a@x.test'], smtp: false, webhookUrl: null, webhookSecret: null, createdAt: T0, expiresAt: T0 + 1000 });
    await before.cancel('job_a', 'key1', T0);
    await before.close();
    expect(await store.claim('w1', 20, T0 + 2000, LEASE)).toEqual([]);
    expect(await store.dueWebhooks(T0 + 2000, 10, LEASE)).toEqual([]);
    expect(threads).toHaveLength(0);
    expect(await store.purgeExpired(T0 + 2000)).toBe(1);
    expect(threads).toHaveLength(1);
  });

  it("gives back the heap a large job's submission used: a compacting GC in the thread once it is written", async () => {
    await submit(['a@x.test']);
    const heapMb = async () => (await threads[0].getHeapStatistics()).total_heap_size / 2 ** 20;
    const before = await heapMb();
    await submit(Array.from({ length: 20_000 }, (_, i) => `u${i}@d${i % 500}.test`), 'job_b');
    // Without the collection the heap keeps the job's garbage (~1 MB above `before` at 20,000 items, 5 at 100,000)
    // until V8's memory reducer runs after a long idle spell: a short deadline tells the two apart.
    await waitFor(async () => (await heapMb()) < before, { timeoutMs: 3000, what: "the thread's heap below its size before the job" });
  });

  it('refuses the calls waiting on a thread that stops (JobStoreUnavailable), and the next write starts another', async () => {
    await submit(['a@x.test']);
    const creating = submit(Array.from({ length: 4500 }, (_, i) => `u${i}@x.test`), 'job_b');
    await threads[0].terminate();
    await expect(creating).rejects.toBeInstanceOf(JobStoreUnavailable);
    expect(await store.get('job_b', 'key1', T0)).toBeNull(); // half written: never queued
    expect((await store.claim('w1', 10, T0, LEASE)).map((c) => c.email)).toEqual(['a@x.test']);
    expect(threads).toHaveLength(2);
  });
});
