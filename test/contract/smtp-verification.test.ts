// SMTP mailbox verification end to end (issue #46): GET /api/v1/email?smtp=true and POST /api/v1/email/bulk with
// "smtp": true against real SMTP servers (test/support/smtp-fixture.ts) and a real DNS server, all on loopback. The
// fixture records each session; the tests assert the dialogue as well as the answer.
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startSmtpFixture, type RecordedSession, type SmtpFixture } from '../support/smtp-fixture.js';
import { startSocks5Server, type Socks5Fixture } from '../support/socks5-server.js';
import { waitFor } from '../support/wait.js';

const HOSTS = {
  standard: '127.0.0.10',
  catchAll: '127.0.0.11',
  grey: '127.0.0.12',
  policy: '127.0.0.13',
  banned: '127.0.0.14',
  silent: '127.0.0.15',
  oneRcpt: '127.0.0.16',
  starttls: '127.0.0.17',
  brokenTls: '127.0.0.18',
  three: '127.0.0.19',
  /** One transaction takes one recipient, answered 20 ms late: many sessions, two MX names point here. */
  shared: '127.0.0.20',
  /** 421 at the greeting. */
  closing: '127.0.0.21',
  slow1: '127.0.0.22',
  slow2: '127.0.0.23',
  slow3: '127.0.0.24',
  /** Greets, then answers RCPT only after 10 s. */
  hang: '127.0.0.25',
  /** Answers RCPT 200 ms late (ten requests arrive meanwhile). */
  late: '127.0.0.26',
  /** No SMTPUTF8 in its EHLO answer. */
  asciiOnly: '127.0.0.27',
  /** Nothing listens here: connections are refused. */
  nobody: '127.0.0.2',
} as const;

const HELO = 'verifier.example.net';
const MAIL_FROM = 'check@verifier.example.net';

/** A domain whose one MX host is `ip`. */
const mxAt = (domain: string, ip: string): Zone => ({
  [domain]: [{ type: 'MX', data: { preference: 10, exchange: `mx.${domain}` } }],
  [`mx.${domain}`]: [{ type: 'A', data: ip }],
});

const zone: Zone = {
  ...mxAt('known.test', HOSTS.standard),
  ...mxAt('catchall.test', HOSTS.catchAll),
  ...mxAt('catchall2.test', HOSTS.catchAll),
  ...mxAt('grey.test', HOSTS.grey),
  ...mxAt('policy.test', HOSTS.policy),
  ...mxAt('banned.test', HOSTS.banned),
  ...mxAt('silent.test', HOSTS.silent),
  ...mxAt('onercpt.test', HOSTS.oneRcpt),
  ...mxAt('tls.test', HOSTS.starttls),
  ...mxAt('brokentls.test', HOSTS.brokenTls),
  ...mxAt('three.test', HOSTS.three),
  'backup.test': [
    { type: 'MX', data: { preference: 20, exchange: 'mx2.backup.test' } },
    { type: 'MX', data: { preference: 10, exchange: 'mx1.backup.test' } },
  ],
  'mx1.backup.test': [{ type: 'A', data: HOSTS.nobody }],
  ...mxAt('shared1.test', HOSTS.shared),
  ...mxAt('shared2.test', HOSTS.shared),
  ...mxAt('hang.test', HOSTS.hang),
  ...mxAt('late.test', HOSTS.late),
  ...mxAt('ascii.test', HOSTS.asciiOnly),
  'twoaddr.test': [{ type: 'MX', data: { preference: 10, exchange: 'mx.twoaddr.test' } }],
  'mx.twoaddr.test': [{ type: 'A', data: HOSTS.nobody }, { type: 'A', data: HOSTS.standard }],
  'greet421.test': [
    { type: 'MX', data: { preference: 10, exchange: 'mx1.greet421.test' } },
    { type: 'MX', data: { preference: 20, exchange: 'mx2.greet421.test' } },
  ],
  'mx1.greet421.test': [{ type: 'A', data: HOSTS.closing }],
  'mx2.greet421.test': [{ type: 'A', data: HOSTS.standard }],
  'slow.test': [1, 2, 3].map((n) => ({ type: 'MX', data: { preference: n * 10, exchange: `mx${n}.slow.test` } })),
  'mx1.slow.test': [{ type: 'A', data: HOSTS.slow1 }],
  'mx2.slow.test': [{ type: 'A', data: HOSTS.slow2 }],
  'mx3.slow.test': [{ type: 'A', data: HOSTS.slow3 }],
  'mx2.backup.test': [{ type: 'A', data: HOSTS.standard }],
  'nullmx.test': [{ type: 'MX', data: { preference: 0, exchange: '.' } }, { type: 'A', data: HOSTS.standard }],
  'aonly.test': [{ type: 'A', data: HOSTS.standard }],
  'nomail.test': [{ type: 'TXT', data: 'v=spf1 -all' }],
};

let dns: TestDnsServer;
let smtp: SmtpFixture;
let socks: Socks5Fixture;
let h: Harness;
const env = () => ({
  DNS_SERVERS: `127.0.0.1:${dns.port}`,
  DNS_TIMEOUT_MS: '2000',
  ALLOW_PRIVATE_TARGETS: 'true',
  SMTP_CHECK: 'on',
  SMTP_HELO_NAME: HELO,
  SMTP_MAIL_FROM: MAIL_FROM,
  SMTP_PORT: String(smtp.port),
  SMTP_TIMEOUT_MS: '10000',
  SMTP_MAX_PER_HOST: '2',
});

beforeAll(async () => {
  dns = await startDnsServer(zone);
  smtp = await startSmtpFixture({
    [HOSTS.standard]: {
      rcpt: (local) =>
        /^(alice|bob)/.test(local)
          ? null
          : local === 'disabled'
            ? { code: 550, text: '5.2.1 mailbox disabled' }
            : local === 'full'
              ? { code: 552, text: '5.2.2 mailbox full' }
              : { code: 550, text: '5.1.1 no such user here' },
    },
    [HOSTS.catchAll]: { rcpt: () => null },
    [HOSTS.grey]: { rcpt: () => ({ code: 450, text: '4.7.1 greylisted, try again later' }) },
    [HOSTS.policy]: { rcpt: () => ({ code: 554, text: '5.7.1 client host blocked using a DNS blocklist' }) },
    [HOSTS.banned]: { greeting: { code: 554, text: '5.7.1 your IP is listed' } },
    [HOSTS.silent]: { silent: true },
    [HOSTS.oneRcpt]: { users: ['alice'], rcpt: (local, i) => (i >= 1 ? { code: 452, text: '4.5.3 too many recipients' } : local === 'alice' ? null : { code: 550, text: '5.1.1 unknown' }) },
    [HOSTS.starttls]: { starttls: true, users: ['alice'] },
    [HOSTS.brokenTls]: { brokenTls: true },
    [HOSTS.three]: { rcpt: (local, i) => (i >= 3 ? { code: 452, text: '4.5.3 too many recipients' } : /^u\d+$/.test(local) ? null : { code: 550, text: '5.1.1 unknown' }) },
    [HOSTS.shared]: { rcptDelayMs: 20, rcpt: (local, i) => (i >= 1 ? { code: 452, text: '4.5.3 one at a time' } : /^s\d+$/.test(local) ? null : { code: 550, text: '5.1.1 unknown' }) },
    [HOSTS.closing]: { greeting: { code: 421, text: '4.3.2 too busy, try later' } },
    [HOSTS.slow1]: { silent: true },
    [HOSTS.slow2]: { silent: true },
    [HOSTS.slow3]: { silent: true },
    [HOSTS.hang]: { users: ['alice'], rcptDelayMs: 10_000 },
    [HOSTS.late]: { users: ['alice'], rcptDelayMs: 200 },
    [HOSTS.asciiOnly]: { users: ['bob'], noSmtpUtf8: true },
  });
  socks = await startSocks5Server();
  h = await startHarness(env());
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
  await socks?.close();
  await dns?.close();
});
beforeEach(() => smtp.reset());

const verify = async (address: string, harness = h) => {
  const res = await harness.call(`/api/v1/email?address=${encodeURIComponent(address)}&smtp=true`);
  expect(res.status).toBe(200);
  return res.body.deliverability;
};
const only = (ip: string): RecordedSession => {
  const sessions = smtp.sessions(ip);
  expect(sessions).toHaveLength(1);
  return sessions[0];
};
/** The catch-all probe: a random local part at the domain, never the address asked about. */
const PROBE = (domain: string) => expect.stringMatching(new RegExp(`^q[0-9a-f]{20}@${domain.replace('.', '\\.')}$`));

describe('the dialogue', () => {
  it('known user: EHLO with SMTP_HELO_NAME, MAIL FROM SMTP_MAIL_FROM, the address, then the probe; no DATA', async () => {
    expect(await verify('alice@known.test')).toEqual({
      status: 'deliverable', reason: 'accepted', catchAll: false, mxHost: 'mx.known.test', smtpCode: 250, enhancedCode: null, tls: false,
    });
    expect(only(HOSTS.standard)).toMatchObject({ helo: HELO, mailFrom: MAIL_FROM, rcpts: ['alice@known.test', PROBE('known.test')], data: false, tls: false, quit: true });
  });

  it('unknown user 550 5.1.1: undeliverable, no probe needed (the domain refuses unknown addresses)', async () => {
    expect(await verify('nobody-at-all@known.test')).toEqual({
      status: 'undeliverable', reason: 'mailbox_not_found', catchAll: false, mxHost: 'mx.known.test', smtpCode: 550, enhancedCode: '5.1.1', tls: false,
    });
    expect(only(HOSTS.standard).rcpts).toEqual(['nobody-at-all@known.test']);
  });

  it.each([
    ['disabled', 'undeliverable', 'mailbox_disabled', 550, '5.2.1'],
    ['full', 'risky', 'mailbox_full', 552, '5.2.2'],
  ])('%s mailbox: %s/%s', async (local, status, reason, smtpCode, enhancedCode) => {
    expect(await verify(`${local}@known.test`)).toMatchObject({ status, reason, smtpCode, enhancedCode, mxHost: 'mx.known.test' });
    expect(only(HOSTS.standard).data).toBe(false);
  });

  it('catch-all domain: the address and a random local part both accepted: risky/catch_all', async () => {
    expect(await verify('anyone@catchall.test')).toEqual({
      status: 'risky', reason: 'catch_all', catchAll: true, mxHost: 'mx.catchall.test', smtpCode: 250, enhancedCode: null, tls: false,
    });
    expect(only(HOSTS.catchAll).rcpts).toEqual(['anyone@catchall.test', PROBE('catchall.test')]);
  });

  it('greylisting 450 4.7.1: unknown/greylisted, never undeliverable', async () => {
    expect(await verify('alice@grey.test')).toEqual({
      status: 'unknown', reason: 'greylisted', catchAll: null, mxHost: 'mx.grey.test', smtpCode: 450, enhancedCode: '4.7.1', tls: false,
    });
    expect(only(HOSTS.grey).rcpts).toEqual(['alice@grey.test']);
  });

  it('554 5.7.1 at RCPT: unknown/blocked (the mailbox was not judged)', async () => {
    expect(await verify('alice@policy.test')).toMatchObject({ status: 'unknown', reason: 'blocked', smtpCode: 554, enhancedCode: '5.7.1', catchAll: null });
  });

  it('554 5.7.1 in the greeting: unknown/blocked, no EHLO, no MAIL, no RCPT', async () => {
    expect(await verify('alice@banned.test')).toEqual({
      status: 'unknown', reason: 'blocked', catchAll: null, mxHost: 'mx.banned.test', smtpCode: 554, enhancedCode: '5.7.1', tls: false,
    });
    expect(only(HOSTS.banned)).toMatchObject({ mailFrom: null, rcpts: [] });
  });

  it('452 to the second RCPT: the real answer stands, the probe goes to a session of its own', async () => {
    expect(await verify('alice@onercpt.test')).toEqual({
      status: 'deliverable', reason: 'accepted', catchAll: false, mxHost: 'mx.onercpt.test', smtpCode: 250, enhancedCode: null, tls: false,
    });
    const sessions = smtp.sessions(HOSTS.oneRcpt);
    expect(sessions.map((s) => s.rcpts)).toEqual([['alice@onercpt.test', PROBE('onercpt.test')], [PROBE('onercpt.test')]]);
  });

  it('STARTTLS offered: used, the self-signed certificate accepted (opportunistic)', async () => {
    expect(await verify('alice@tls.test')).toMatchObject({ status: 'deliverable', tls: true });
    expect(only(HOSTS.starttls)).toMatchObject({ helo: HELO, tls: true, data: false });
  });

  it('a STARTTLS handshake that fails: a new plain session answers, and the host is asked in plain from then on', async () => {
    expect(await verify('alice@brokentls.test')).toMatchObject({ status: 'risky', reason: 'catch_all', tls: false });
    const sessions = smtp.sessions(HOSTS.brokenTls);
    expect(sessions).toHaveLength(2);
    expect(sessions[0].rcpts).toEqual([]);
    expect(sessions[1]).toMatchObject({ helo: HELO, mailFrom: MAIL_FROM, rcpts: ['alice@brokentls.test', PROBE('brokentls.test')], data: false });
    // The host's failure is remembered (an hour): the next verification goes plain at once, one session.
    smtp.reset();
    expect(await verify('bob@brokentls.test')).toMatchObject({ tls: false });
    expect(only(HOSTS.brokenTls).rcpts).toEqual(['bob@brokentls.test']);
  });

  it('null MX: undeliverable/null_mx without any connection', async () => {
    expect(await verify('alice@nullmx.test')).toEqual({ status: 'undeliverable', reason: 'null_mx', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null });
    expect(smtp.sessions(HOSTS.standard)).toEqual([]);
  });

  it('no MX, an A record: the domain is its own mail server (implicit MX)', async () => {
    expect(await verify('alice@aonly.test')).toMatchObject({ status: 'deliverable', mxHost: 'aonly.test' });
    expect(only(HOSTS.standard).rcpts[0]).toBe('alice@aonly.test');
  });

  it('no MX and no address: undeliverable/no_mail_server', async () => {
    expect(await verify('alice@nomail.test')).toMatchObject({ status: 'undeliverable', reason: 'no_mail_server', mxHost: null });
  });

  it('a first MX that refuses connections: the next by preference answers', async () => {
    expect(await verify('bob@backup.test')).toMatchObject({ status: 'deliverable', mxHost: 'mx2.backup.test' });
    expect(only(HOSTS.standard).rcpts[0]).toBe('bob@backup.test');
  });

  it('answers a second ask from the cache, without a session', async () => {
    await verify('bob@known.test');
    smtp.reset();
    expect(await verify('bob@known.test')).toMatchObject({ status: 'deliverable' });
    expect(smtp.sessions(HOSTS.standard)).toEqual([]);
  });
});

describe('not checked', () => {
  it('without smtp=true: not_requested, no connection', async () => {
    const res = await h.call('/api/v1/email?address=alice%40known.test');
    expect(res.body.deliverability).toEqual({ status: 'not_checked', reason: 'not_requested', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null });
    expect(smtp.sessions(HOSTS.standard)).toEqual([]);
  });

  it('a malformed address: invalid_format', async () => {
    expect(await verify('alice@@known')).toMatchObject({ status: 'not_checked', reason: 'invalid_format' });
  });

  it('refuses smtp other than true or false', async () => {
    const res = await h.call('/api/v1/email?address=alice%40known.test&smtp=yes');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
  });
});

describe('bulk with "smtp": true', () => {
  it('answers each address, one session carrying the domain\'s recipients, the probe once after them', async () => {
    // Addresses no other test asks about: none is in the verdict cache.
    const items = ['alice.b@known.test', 'nobody@known.test', 'bob.b@known.test', 'x@catchall2.test', 'y@catchall2.test', 'not-an-address', ''];
    const res = await h.call('/api/v1/email/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items, smtp: true }) });
    expect(res.status).toBe(200);
    const d = res.body.results.map((r: any) => r.result?.deliverability ?? r.status);
    expect(d.map((x: any) => x.reason ?? x)).toEqual(['accepted', 'mailbox_not_found', 'accepted', 'catch_all', 'catch_all', 'invalid_format', 400]);
    expect(d[0].catchAll).toBe(false);
    // known.test refused an unknown address: no probe needed there.
    expect(smtp.sessions(HOSTS.standard).map((s) => s.rcpts)).toEqual([['alice.b@known.test', 'nobody@known.test', 'bob.b@known.test']]);
    expect(smtp.sessions(HOSTS.catchAll).map((s) => s.rcpts)).toEqual([['x@catchall2.test', 'y@catchall2.test', PROBE('catchall2.test')]]);
    // The domain's catch-all state is known now: another address there needs no probe.
    smtp.reset();
    expect(await verify('z@catchall2.test')).toMatchObject({ status: 'risky', reason: 'catch_all', catchAll: true });
    expect(smtp.sessions(HOSTS.catchAll).map((s) => s.rcpts)).toEqual([['z@catchall2.test']]);
  });

  it('20 addresses at a server taking 3 a transaction: sessions of 3, at most SMTP_MAX_PER_HOST at once, no DATA', async () => {
    const items = Array.from({ length: 20 }, (_, i) => `u${i}@three.test`);
    const res = await h.call('/api/v1/email/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items, smtp: true }) });
    expect(res.body.results.map((r: any) => r.result.deliverability.status)).toEqual(Array(20).fill('deliverable'));
    const sessions = smtp.sessions(HOSTS.three);
    const asked = sessions.flatMap((s) => s.rcpts).filter((a) => a.startsWith('u'));
    // Each address accepted exactly once (a 452 answer moves it, never repeats an accepted one).
    expect(new Set(asked).size).toBe(20);
    expect(sessions.every((s) => s.rcpts.filter((a) => a.startsWith('u')).length <= 4 && !s.data && s.helo === HELO)).toBe(true);
    expect(sessions.flatMap((s) => s.rcpts).filter((a) => a.startsWith('q'))).toContainEqual(PROBE('three.test'));
    expect(smtp.maxConcurrent(HOSTS.three)).toBe(2);
  });

  it('without "smtp": not_requested and no session', async () => {
    const res = await h.call('/api/v1/email/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: ['alice@known.test'] }) });
    expect(res.body.results[0].result.deliverability.reason).toBe('not_requested');
    expect(smtp.sessions(HOSTS.standard)).toEqual([]);
  });
});

describe('configurations', () => {
  it('SMTP_CHECK=off: not_checked/disabled, no connection', async () => {
    const off = await startHarness({ ...env(), SMTP_CHECK: 'off' });
    try {
      expect(await verify('alice@known.test', off)).toMatchObject({ status: 'not_checked', reason: 'disabled' });
      expect(smtp.sessions(HOSTS.standard)).toEqual([]);
    } finally {
      await off.close();
    }
  });

  it('a server that never greets: unknown/timeout after SMTP_TIMEOUT_MS', async () => {
    const quick = await startHarness({ ...env(), SMTP_TIMEOUT_MS: '150' });
    try {
      expect(await verify('alice@silent.test', quick)).toEqual({ status: 'unknown', reason: 'timeout', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null });
      expect(smtp.sessions(HOSTS.silent)).toHaveLength(1);
    } finally {
      await quick.close();
    }
  });

  it('every MX host refusing connections: unknown/connection_failed', async () => {
    const lone = await startHarness({ ...env() });
    dns.set('refusing.test', [{ type: 'MX', data: { preference: 10, exchange: 'mx1.backup.test' } }]);
    try {
      expect(await verify('alice@refusing.test', lone)).toMatchObject({ status: 'unknown', reason: 'connection_failed' });
    } finally {
      await lone.close();
    }
  });

  it('MX hosts at loopback addresses are not contacted without ALLOW_PRIVATE_TARGETS (the target guard)', async () => {
    const guarded = await startHarness({ ...env(), ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      expect(await verify('alice@known.test', guarded)).toMatchObject({ status: 'unknown', reason: 'connection_failed' });
      expect(smtp.sessions(HOSTS.standard)).toEqual([]);
    } finally {
      await guarded.close();
    }
  });

  it('SMTP_PROXY: the session goes through the SOCKS5 proxy to the guarded address', async () => {
    const proxied = await startHarness({ ...env(), SMTP_PROXY: `socks5://127.0.0.1:${socks.port}` });
    try {
      expect(await verify('alice@known.test', proxied)).toMatchObject({ status: 'deliverable', mxHost: 'mx.known.test' });
      expect(socks.connects).toEqual([`${HOSTS.standard}:${smtp.port}`]);
      expect(only(HOSTS.standard)).toMatchObject({ helo: HELO, rcpts: ['alice@known.test', PROBE('known.test')] });
    } finally {
      await proxied.close();
    }
  });
});

describe('server addresses, deadline, cancel (issue #55)', () => {
  it('an MX host with two addresses whose first refuses: the second address answers', async () => {
    expect(await verify('alice@twoaddr.test')).toMatchObject({ status: 'deliverable', mxHost: 'mx.twoaddr.test' });
    expect(only(HOSTS.standard).rcpts[0]).toBe('alice@twoaddr.test');
  });

  it('two MX names on one address: SMTP_MAX_PER_HOST holds across them (the fixture records concurrency)', async () => {
    const items = [1, 2].flatMap((d) => Array.from({ length: 6 }, (_, i) => `s${i}@shared${d}.test`));
    const res = await h.call('/api/v1/email/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items, smtp: true }) });
    expect(res.body.results.map((r: any) => r.result.deliverability.status)).toEqual(Array(12).fill('deliverable'));
    expect(smtp.sessions(HOSTS.shared).length).toBeGreaterThanOrEqual(12);
    expect(smtp.maxConcurrent(HOSTS.shared)).toBe(2);
  });

  it('421 at the greeting of the first MX: the next MX answers', async () => {
    expect(await verify('alice@greet421.test')).toMatchObject({ status: 'deliverable', mxHost: 'mx2.greet421.test' });
    expect(only(HOSTS.closing)).toMatchObject({ mailFrom: null, rcpts: [] });
  });

  it('three slow MX hosts: SMTP_DEADLINE_MS ends the verification unknown/timeout, later hosts never dialled', async () => {
    const short = await startHarness({ ...env(), SMTP_TIMEOUT_MS: '60000', SMTP_DEADLINE_MS: '300' });
    try {
      expect(await verify('alice@slow.test', short)).toEqual({ status: 'unknown', reason: 'timeout', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null });
      // The 300 ms also cover the DNS lookups: under load they can use it all before the first host is dialled, so
      // that host is dialled at most once here (that it is dialled is the fake-timer test's in mailbox-verifier.test.ts).
      // Only the deadline ends this within the test's time: SMTP_TIMEOUT_MS is a minute per host.
      expect(smtp.sessions(HOSTS.slow1).length).toBeLessThanOrEqual(1);
      expect([...smtp.sessions(HOSTS.slow2), ...smtp.sessions(HOSTS.slow3)]).toEqual([]);
      await waitFor(() => smtp.sessions(HOSTS.slow1).every((s) => s.closed), { what: 'the first slow host\'s connection closed' });
    } finally {
      await short.close();
    }
  });

  it('an MX host whose address lookup stalls: SMTP_DEADLINE_MS ends the verification unknown/timeout, not DNS_TIMEOUT_MS', async () => {
    const short = await startHarness({ ...env(), DNS_TIMEOUT_MS: '60000', SMTP_DEADLINE_MS: '300' });
    try {
      // The address checks' own lookups (the domain's MX, A, AAAA) answered and cached; then DNS goes silent, so the
      // verification's lookup of the MX host's addresses is the one that waits.
      expect((await short.call('/api/v1/email?address=alice%40known.test')).body.mxRecord).toBe(true);
      dns.queries.length = 0;
      dns.setMode('silent');
      expect(await verify('alice@known.test', short)).toEqual({ status: 'unknown', reason: 'timeout', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null });
      expect(dns.queries.map((q) => q.name)).toContain('mx.known.test');
      expect(smtp.sessions(HOSTS.standard)).toEqual([]);
    } finally {
      dns.setMode('normal');
      await short.close();
    }
  });

  it('a client that disconnects mid-verification: QUIT sent, the connection closed', async () => {
    // Over TCP: the subject is the client's connection going away.
    const tcp = await startHarness(env(), { tcp: true });
    try {
      const req = http.get(`${tcp.url}/api/v1/email?address=alice%40hang.test&smtp=true`, { headers: { 'x-api-key': tcp.key } });
      req.on('error', () => undefined);
      await waitFor(() => smtp.sessions(HOSTS.hang)[0]?.rcpts.length === 1, { what: 'the RCPT of the hanging session' });
      req.destroy();
      // The server answers RCPT only after 10 s: a connection closed sooner was closed by the verifier.
      const session = await waitFor(() => (smtp.sessions(HOSTS.hang)[0].closed ? smtp.sessions(HOSTS.hang)[0] : null), { timeoutMs: 8000, what: 'the session closed' });
      expect(session).toMatchObject({ quit: true, rcpts: ['alice@hang.test'], data: false });
    } finally {
      await tcp.close();
    }
  });

  it('ten concurrent requests for one address: one session answers them all', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => verify('alice@late.test')));
    expect(answers.every((a) => a.status === 'deliverable' && a.mxHost === 'mx.late.test')).toBe(true);
    expect(only(HOSTS.late).rcpts).toEqual(['alice@late.test', PROBE('late.test')]);
  });

  it('a UTF-8 local part at a server without SMTPUTF8: unknown/smtputf8_unsupported, no RCPT for it', async () => {
    expect(await verify('josé@ascii.test')).toEqual({ status: 'unknown', reason: 'smtputf8_unsupported', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null });
    expect(smtp.sessions(HOSTS.asciiOnly).flatMap((s) => s.rcpts)).toEqual([]);
  });

  it('a UTF-8 local part at a server offering SMTPUTF8: asked, with SMTPUTF8 in MAIL FROM', async () => {
    expect(await verify('josé@known.test')).toMatchObject({ status: 'undeliverable', reason: 'mailbox_not_found', mxHost: 'mx.known.test' });
    expect(only(HOSTS.standard).rcpts).toEqual(['josé@known.test']);
  });
});

describe('privacy', () => {
  it('writes no address and no probe local part to the logs at info level', async () => {
    const info = await startHarness({ ...env(), LOG_LEVEL: 'info' });
    try {
      await verify('alice@catchall.test', info);
      await verify('nobody-at-all@known.test', info);
      const probe = smtp.sessions(HOSTS.catchAll)[0].rcpts[1];
      const logs = info.logs.join('\n');
      expect(logs).not.toContain('alice');
      expect(logs).not.toContain('nobody-at-all');
      expect(logs).not.toContain(probe.split('@')[0]);
    } finally {
      await info.close();
    }
  });
});
