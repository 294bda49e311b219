// Redis that fails over (issue #56 item 6): REDIS_SENTINELS and REDIS_SENTINEL_NAME instead of REDIS_URL, against real
// processes: a primary, a replica and three `redis-server --sentinel`. The primary is killed in the middle of a job:
// within 30 s requests are answered again from the promoted replica with the keys and counts intact, and the job
// completes with every item exactly once.
// @module-tag slow (five redis-server processes, a failover)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDnsServer } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startRedisSentinelGroup, type TestSentinelGroup } from '../support/redis-server.js';
import { runKeysCli } from '../support/server-process.js';
import { type SmtpFixture, smtpCheckEnv } from '../support/smtp-fixture.js';
import { waitFor } from '../support/wait.js';
import { startSlowMailDomain } from './fixtures.js';

const MX = '127.0.0.22';
let ITEMS: string[];

let dir: string;
let group: TestSentinelGroup;
let dns: TestDnsServer;
let smtp: SmtpFixture;
let h: Harness;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sentinel-'));
  group = await startRedisSentinelGroup(dir);
  // Each RCPT answered late: the job takes seconds, long enough to act in the middle of it.
  const slow = await startSlowMailDomain(MX, 250);
  ({ dns, smtp } = slow);
  ITEMS = slow.items(16);
  env = {
    REDIS_SENTINELS: group.sentinels,
    REDIS_SENTINEL_NAME: group.name,
    ...smtpCheckEnv(dns.port, smtp.port),
    JOBS_LEASE_MS: '2000',
  };
  h = await startHarness(env);
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
  await dns?.close();
  await group?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('REDIS_SENTINELS: the primary killed mid-job', () => {
  it('keys and counts survive the failover, requests are answered again within 30 s, the job completes exactly once', async () => {
    // The keys CLI reaches the primary through the Sentinels too.
    const created = await runKeysCli(['create', '--name', 'sentinel-cli'], { env });
    expect(created.code).toBe(0);
    const cliKey = /vls_[A-Za-z0-9_-]+/.exec(created.stdout)?.[0];
    expect(cliKey).toBeDefined();
    for (let i = 0; i < 3; i++) expect((await h.call('/api/v1/bic/DEUTDEFF')).status).toBe(200);
    const before = (await h.call('/api/v1/usage')).body.day.used;
    const res = await h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: ITEMS, smtp: true }) });
    expect(res.status).toBe(202);
    const status = () => h.call(`/api/v1/email/jobs/${res.body.id}`);
    await waitFor(async () => (await status()).body.processed >= 2, { what: 'the job under way' });

    await group.killPrimary();
    const killedAt = Date.now();
    await waitFor(async () => (await group.currentPrimaryPort()) === group.replicaPort, { what: 'the Sentinels to promote the replica' });
    // Answered from the new primary: the usage read there (not counted alone) holds what was counted before.
    await waitFor(async () => {
      const usage = await h.call('/api/v1/usage');
      // A key this server has never seen is looked up in Redis: answered only once the new primary is reached.
      const cli = await h.call('/api/v1/bic/DEUTDEFF', { key: cliKey });
      return usage.status === 200 && cli.status === 200 && usage.body.day.used >= before;
    }, { what: 'answers from the promoted replica', timeoutMs: 30_000, intervalMs: 200 });
    expect(Date.now() - killedAt).toBeLessThan(30_000);

    const job = await waitFor(async () => ((await status()).body.status === 'completed' ? (await status()).body : null), { what: 'the job to complete', timeoutMs: 90_000 });
    expect(job).toMatchObject({ processed: 16, counts: { deliverable: 16 } });
    const text = await (await h.fetch(`/api/v1/email/jobs/${res.body.id}/results`, { headers: { 'x-api-key': h.key } })).text();
    expect(text.split('\n').filter(Boolean).map((l) => JSON.parse(l).index)).toEqual(ITEMS.map((_, i) => i));
  });
});
