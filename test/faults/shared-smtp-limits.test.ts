// Workers that scale out share the politeness limits (issue #56 item 3, docs/adr/0033-shared-smtp-limits.md): two
// `npm run job-worker` processes on one Redis work on a job whose domains all have their mail at one server address;
// together they never hold more than SMTP_MAX_PER_HOST sessions to it, one killed with SIGKILL mid-session included,
// and the job completes with every item once.
// @module-tag slow (child processes)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness } from '../support/harness.js';
import { startRedisServer, type TestRedis } from '../support/redis-server.js';
import { startJobWorkerProcess } from '../support/server-process.js';
import { smtpCheckEnv, startSmtpFixture, type SmtpFixture } from '../support/smtp-fixture.js';
import { waitFor } from '../support/wait.js';

const MX = '127.0.0.24';
const DOMAINS = Array.from({ length: 8 }, (_, i) => `w${i}.shared.test`);
const ITEMS = DOMAINS.flatMap((d) => [0, 1, 2, 3].map((u) => `u${u}@${d}`));

let dns: TestDnsServer;
let smtp: SmtpFixture;
let redis: TestRedis;
let env: Record<string, string>;

beforeAll(async () => {
  const zone: Zone = Object.fromEntries(DOMAINS.flatMap((d) => [[d, [{ type: 'MX', data: { preference: 10, exchange: `mx.${d}` } }]], [`mx.${d}`, [{ type: 'A', data: MX }]]]));
  dns = await startDnsServer(zone);
  // RCPTs answered late: sessions of both workers overlap, and one is open when a worker is killed.
  smtp = await startSmtpFixture({ [MX]: { rcpt: (local) => (/^u\d+$/.test(local) ? null : { code: 550, text: '5.1.1 unknown' }), rcptDelayMs: 150 } });
  redis = await startRedisServer();
  // SMTP_TIMEOUT_MS 3 s: a killed worker's leases end 8 s later (docs/smtp.md); JOBS_LEASE_MS: its items come back soon.
  env = { ...smtpCheckEnv(dns.port, smtp.port), REDIS_URL: redis.url, SMTP_MAX_PER_HOST: '2', SMTP_TIMEOUT_MS: '3000', JOBS_LEASE_MS: '1500', DATA_DIR: mkdtempSync(join(tmpdir(), 'jobs-shared-')) };
});
afterAll(async () => {
  await redis?.stop();
  await smtp?.close();
  await dns?.close();
  if (env) rmSync(env.DATA_DIR, { recursive: true, force: true });
});

it('two job workers, then one SIGKILLed mid-session: at most SMTP_MAX_PER_HOST sessions to the address in total', async () => {
  const h = await startHarness({ ...env, JOBS_WORKER: 'off' });
  const workers = [await startJobWorkerProcess({ env }), await startJobWorkerProcess({ env })];
  try {
    const res = await h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: ITEMS, smtp: true }) });
    expect(res.status).toBe(202);
    const status = async () => (await h.call(`/api/v1/email/jobs/${res.body.id}`)).body;
    await waitFor(() => smtp.sessions(MX).filter((s) => s.rcpts.length > 0 && !s.closed).length > 0 && smtp.sessions(MX).length >= 4, { what: 'both workers in the middle of the job' });
    workers[0].child.kill('SIGKILL');
    await workers[0].exited;
    const job = await waitFor(async () => ((await status()).status === 'completed' ? status() : null), { what: 'the job to complete', timeoutMs: 90_000 });
    expect(job).toMatchObject({ processed: ITEMS.length, counts: { deliverable: ITEMS.length } });
    const text = await (await h.fetch(`/api/v1/email/jobs/${res.body.id}/results`, { headers: { 'x-api-key': h.key } })).text();
    expect(text.split('\n').filter(Boolean).map((l) => JSON.parse(l).index)).toEqual(ITEMS.map((_, i) => i));
    expect(smtp.maxConcurrent(MX)).toBe(2);
  } finally {
    expect(await workers[1].stop()).toBe(0);
    await h.close();
  }
});
