// SMTP limits and verdicts shared (issue #56 item 3, docs/adr/0033-shared-smtp-limits.md) with the real parts: a real
// redis-server, the test DNS server, the SMTP fixture counting sessions per address. Verifiers with their own Redis
// connections never exceed SMTP_MAX_PER_HOST to one address together; what one finds the other reuses; no address in
// any Redis key; a holder killed frees its slots when their lease ends; Redis gone answers unknown/limits_unavailable;
// a server working on jobs counts its requests' and its jobs' sessions together.
// @module-tag slow (child processes)
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/adapters/dns/resolver.js';
import { createMailboxVerifier, type MailboxVerifierOptions } from '../../src/adapters/smtp/mailbox-verifier.js';
import { createSmtpShared, type SmtpShared } from '../../src/capabilities/shared/smtp-shared.js';
import { createLogger } from '../../src/http/logging.js';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness } from '../support/harness.js';
import { COMMAND_TIMEOUT_MS, startRedisServer, type TestRedis } from '../support/redis-server.js';
import { smtpCheckEnv, startSmtpFixture, type SmtpFixture } from '../support/smtp-fixture.js';
import { waitFor } from '../support/wait.js';

/** One server address behind the MX hosts of eight domains: per-address limits are about it, whatever the names. */
const MX = '127.0.0.23';
const DOMAINS = Array.from({ length: 8 }, (_, i) => `d${i}.shared.test`);
const PER_HOST = 2;

let dns: TestDnsServer;
let smtp: SmtpFixture;
let redis: TestRedis;
let probe: Redis;
const opened: SmtpShared[] = [];

beforeAll(async () => {
  const zone: Zone = Object.fromEntries(
    DOMAINS.flatMap((d) => [
      [d, [{ type: 'MX', data: { preference: 10, exchange: `mx.${d}` } }]],
      [`mx.${d}`, [{ type: 'A', data: MX }]],
    ]),
  );
  dns = await startDnsServer(zone);
  // Each RCPT answered late, so sessions overlap; `alice` exists everywhere, `temp` is greylisted.
  smtp = await startSmtpFixture({ [MX]: { users: ['alice', 'bob'], rcpt: (l) => (l === 'temp' ? { code: 450, text: '4.2.0 try later' } : /^(alice|bob)$/.test(l) ? null : { code: 550, text: '5.1.1 unknown' }), rcptDelayMs: 60 } });
  redis = await startRedisServer();
  probe = new Redis(redis.url, { commandTimeout: COMMAND_TIMEOUT_MS });
  probe.on('error', () => undefined); // the last test kills Redis: the probe reconnects quietly
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  probe?.disconnect();
  await redis?.stop();
  await smtp?.close();
  await dns?.close();
});

const config = (redisUrl: string | null, smtpTimeoutMs = 5000) => ({ redisUrl, smtpMaxPerHost: PER_HOST, smtpMaxSessions: 50, smtpTimeoutMs });

/** The parts of one process: its own Redis connection (or none), its own slots and verdict cache. */
async function processParts(redisUrl: string | null, smtpTimeoutMs?: number): Promise<SmtpShared> {
  const shared = await createSmtpShared(config(redisUrl, smtpTimeoutMs), createLogger('silent'));
  opened.push(shared);
  return shared;
}

function verifier(shared: SmtpShared, extra: Partial<MailboxVerifierOptions> = {}) {
  const resolver = createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 5000 });
  const o = { resolver, allowPrivate: true, port: smtp.port, heloName: 'verifier.example.net', mailFrom: 'check@verifier.example.net', timeoutMs: 5000, maxPerHost: PER_HOST, proxy: null, ...extra };
  return createMailboxVerifier(o, shared.slots, shared.verdicts);
}

/** Every domain asked at once by each verifier: far more sessions wanted than the limit lets through. */
const everyDomain = (v: ReturnType<typeof verifier>, locals: string[]) => Promise.all(DOMAINS.map((d) => v.verify(d, locals)));

describe('one process: the requests\' and the jobs\' verifiers share its slots', () => {
  it('both busy at one address: never more than SMTP_MAX_PER_HOST sessions to it', async () => {
    smtp.reset();
    const shared = await processParts(null);
    const [requests, jobs] = [verifier(shared), verifier(shared, { reuseUnknown: false })];
    await Promise.all([everyDomain(requests, ['u1']), everyDomain(jobs, ['u2'])]);
    expect(smtp.sessions(MX).length).toBeGreaterThanOrEqual(DOMAINS.length * 2);
    expect(smtp.maxConcurrent(MX)).toBe(PER_HOST);
  });
});

describe('one server working on jobs (the capabilities\' wiring)', () => {
  it('requests and a job at one address meanwhile: SMTP_MAX_PER_HOST sessions to it in all', async () => {
    smtp.reset();
    const h = await startHarness({ ...smtpCheckEnv(dns.port, smtp.port), SMTP_MAX_PER_HOST: String(PER_HOST) });
    try {
      const job = await h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: DOMAINS.map((d) => `u5@${d}`), smtp: true }) });
      expect(job.status).toBe(202);
      const answers = await Promise.all(DOMAINS.map((d) => h.call(`/api/v1/email?address=u6@${d}&smtp=true`)));
      expect(answers.every((r) => r.status === 200)).toBe(true);
      await waitFor(async () => (await h.call(`/api/v1/email/jobs/${job.body.id}`)).body.status === 'completed', { what: 'the job to complete' });
      expect(smtp.sessions(MX).length).toBeGreaterThanOrEqual(DOMAINS.length * 2);
      expect(smtp.maxConcurrent(MX)).toBe(PER_HOST);
    } finally {
      await h.close();
    }
  });
});

describe('processes sharing Redis', () => {
  it('two verifiers with their own connections: SMTP_MAX_PER_HOST to one address in total', async () => {
    smtp.reset();
    const [a, b] = [verifier(await processParts(redis.url)), verifier(await processParts(redis.url))];
    await Promise.all([everyDomain(a, ['u3']), everyDomain(b, ['u4'])]);
    expect(smtp.sessions(MX).length).toBeGreaterThanOrEqual(DOMAINS.length * 2);
    expect(smtp.maxConcurrent(MX)).toBe(PER_HOST);
    await waitFor(async () => (await probe.zcard(`vls:smtp:slots:${MX}`)) === 0, { what: 'every slot given back' });
  });

  it('a verdict one finds the other reuses without a session; an unknown one is not reused by the jobs\' verifier', async () => {
    const [a, b] = [verifier(await processParts(redis.url)), verifier(await processParts(redis.url), { reuseUnknown: false })];
    const verdicts = async () => (await probe.keys('vls:smtp:verdict:*')).filter((k) => !k.endsWith(':secret')).length;
    const before = await verdicts();
    const first = await a.verify(DOMAINS[0], ['alice', 'nobody', 'temp']);
    expect(first.map((d) => d.reason)).toEqual(['accepted', 'mailbox_not_found', 'greylisted']);
    // The write is not awaited by the verification (its answer does not wait on Redis): wait for it to land.
    await waitFor(async () => (await verdicts()) >= before + 3, { what: "the first verifier's verdicts on Redis" });
    smtp.reset();
    expect(await b.verify(DOMAINS[0], ['alice', 'nobody'])).toEqual(first.slice(0, 2));
    expect(smtp.sessions(MX)).toHaveLength(0);
    await b.verify(DOMAINS[0], ['temp']);
    expect(smtp.sessions(MX).flatMap((s) => s.rcpts)).toContain(`temp@${DOMAINS[0]}`);
  });

  it('no address, local part or domain in any Redis key', async () => {
    const keys = await probe.keys('*');
    expect(keys.some((k) => k.startsWith('vls:smtp:verdict:'))).toBe(true);
    // Verdicts under a 256-bit HMAC (43 base64url characters), slots under the server's IP, the secret: nothing else.
    for (const k of keys) expect(k).toMatch(/^vls:smtp:(verdict:[\w-]{43}|verdict:secret|slots:127\.0\.0\.\d+)$/);
    for (const k of keys) expect(k).not.toMatch(/@|alice|nobody|temp|shared\.test/);
  });

  it('a holder killed with SIGKILL: its slots stay taken until their lease ends, then another process gets one', async () => {
    const address = '127.0.0.99';
    const holder = spawn(process.execPath, ['--import', 'tsx', 'test/support/slot-holder.ts', redis.url, address, String(PER_HOST), '1500'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    holder.stdout!.on('data', (d) => (out += d));
    await waitFor(() => out.includes('held'), { what: 'the holder to take its slots' });
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    const leases = await probe.zrange(`vls:smtp:slots:${address}`, '0', '-1', 'WITHSCORES');
    expect(leases).toHaveLength(PER_HOST * 2); // still held by the dead process
    const shared = await processParts(redis.url);
    const release = await shared.slots.acquire(address, AbortSignal.timeout(20_000));
    const [seconds, micros] = await probe.time();
    expect(Number(seconds) * 1000 + Number(micros) / 1000).toBeGreaterThanOrEqual(Number(leases[1])); // not before the lease ended
    release();
  });

  it('Redis gone until the deadline: unknown/limits_unavailable, no server asked', async () => {
    const v = verifier(await processParts(redis.url), { deadlineMs: 1500 });
    await redis.kill();
    smtp.reset();
    try {
      const [d] = await v.verify(DOMAINS[1], ['carol']);
      expect(d).toMatchObject({ status: 'unknown', reason: 'limits_unavailable' });
      expect(smtp.sessions(MX)).toHaveLength(0);
    } finally {
      await redis.start();
    }
  });
});
