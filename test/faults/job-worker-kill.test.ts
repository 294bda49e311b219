// Nothing lost (issue #56, docs/jobs.md): `npm run job-worker` processes beside a server that works on no job
// (JOBS_WORKER=off), on the embedded queue and on BullMQ with a real redis-server. A worker killed with SIGKILL in the
// middle of a job: another takes its items over once their leases end, and every item of the job has exactly one
// result line; the server restarted on the same DATA_DIR still has the job; Redis unreachable: submissions answer 503
// UPSTREAM_UNAVAILABLE, the job pauses and completes once Redis is back.
// @module-tag slow (child processes)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDnsServer } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startJobWorkerProcess } from '../support/server-process.js';
import { startRedisServer, type TestRedis } from '../support/redis-server.js';
import { startFaultyTcp, type FaultyTcp } from './fault-upstreams.js';
import { type SmtpFixture, smtpCheckEnv } from '../support/smtp-fixture.js';
import { waitFor } from '../support/wait.js';
import { startSlowMailDomain } from './fixtures.js';

const MX = '127.0.0.21';
let ITEMS: string[];

let dns: TestDnsServer;
let smtp: SmtpFixture;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  // Each RCPT answered late: the job takes seconds, long enough to act in the middle of it.
  const slow = await startSlowMailDomain(MX, 300);
  ({ dns, smtp } = slow);
  ITEMS = slow.items(12);
  dataDir = mkdtempSync(join(tmpdir(), 'jobs-kill-'));
  env = {
    DATA_DIR: dataDir,
    ...smtpCheckEnv(dns.port, smtp.port),
    JOBS_LEASE_MS: '1500',
  };
});
afterAll(async () => {
  await smtp?.close();
  await dns?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const serve = (): Promise<Harness> => startHarness({ ...env, JOBS_WORKER: 'off' });

describe('job workers on the embedded queue', () => {
  it('a worker killed mid-job: another takes over, and every item has exactly one line', async () => {
    let h = await serve();
    const res = await h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: ITEMS, smtp: true }) });
    expect(res.status).toBe(202);
    const id = res.body.id;
    const key = h.key;
    // The server works on no job: the job waits for a worker (and survives the server's restart meanwhile).
    expect((await h.call(`/api/v1/email/jobs/${id}`)).body.status).toBe('queued');
    await h.close();
    h = await startHarness({ ...env, JOBS_WORKER: 'off', DATA_DIR: dataDir });
    const status = () => h.call(`/api/v1/email/jobs/${id}`, { key });
    // The new harness made a key of its own: the job is read with the key that created it (same store).
    expect((await status()).body).toMatchObject({ status: 'queued', total: 12 });

    const first = await startJobWorkerProcess({ dataDir, env });
    await waitFor(() => smtp.sessions(MX).some((s) => s.rcpts.length >= 2), { what: 'the first worker in the middle of the job' });
    first.child.kill('SIGKILL');
    await first.exited;
    const done = (await status()).body.processed;
    expect(done).toBeLessThan(12);

    const second = await startJobWorkerProcess({ dataDir, env });
    try {
      const job = await waitFor(async () => ((await status()).body.status === 'completed' ? (await status()).body : null), { what: 'the job to complete', timeoutMs: 90_000 });
      expect(job).toMatchObject({ processed: 12, counts: { deliverable: 12 } });
      const text = await (await h.fetch(`/api/v1/email/jobs/${id}/results`, { headers: { 'x-api-key': key } })).text();
      const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
      expect(lines.map((l) => l.index)).toEqual(ITEMS.map((_, i) => i));
      expect(lines.every((l) => l.status === 'deliverable' && l.attempts === 1)).toBe(true);
    } finally {
      expect(await second.stop()).toBe(0);
      await h.close();
    }
  });
});

describe('job workers on BullMQ (REDIS_URL through a relay that can cut Redis off)', () => {
  let redis: TestRedis;
  let relay: FaultyTcp;
  beforeAll(async () => {
    redis = await startRedisServer();
    relay = await startFaultyTcp(redis.port);
  });
  afterAll(async () => {
    await relay?.close();
    await redis?.stop();
  });

  it('a worker killed mid-job, then Redis cut off: 503 UPSTREAM_UNAVAILABLE, and the job completes with every item once', async () => {
    const redisEnv = { ...env, REDIS_URL: `redis://127.0.0.1:${relay.port}`, DATA_DIR: mkdtempSync(join(tmpdir(), 'jobs-redis-')) };
    const h = await startHarness({ ...redisEnv, JOBS_WORKER: 'off' });
    const post = () => h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: ITEMS, smtp: true }) });
    const res = await post();
    expect(res.status).toBe(202);
    const status = () => h.call(`/api/v1/email/jobs/${res.body.id}`);
    smtp.reset();
    const first = await startJobWorkerProcess({ env: redisEnv });
    await waitFor(() => smtp.sessions(MX).some((s) => s.rcpts.length >= 2), { what: 'the first worker in the middle of the job' });
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startJobWorkerProcess({ env: redisEnv });
    try {
      relay.mode = 'reset';
      relay.resetAll();
      const refused = await post();
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(refused.headers.get('retry-after')).toBe('5');
      relay.mode = 'pass';
      const job = await waitFor(async () => ((await status()).body.status === 'completed' ? (await status()).body : null), { what: 'the job to complete', timeoutMs: 90_000 });
      expect(job).toMatchObject({ processed: 12, counts: { deliverable: 12 } });
      const text = await (await h.fetch(`/api/v1/email/jobs/${res.body.id}/results`, { headers: { 'x-api-key': h.key } })).text();
      expect(text.split('\n').filter(Boolean).map((l) => JSON.parse(l).index)).toEqual(ITEMS.map((_, i) => i));
    } finally {
      relay.mode = 'pass';
      expect(await second.stop()).toBe(0);
      await h.close();
      rmSync(redisEnv.DATA_DIR, { recursive: true, force: true });
    }
  });
});
