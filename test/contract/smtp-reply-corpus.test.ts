// Replies as the transport reads them (issue #55 items 1 and 4): the real-reply corpus sent by real SMTP servers on
// loopback (Nodemailer's smtp-server for one-line replies, a hand-written server for multi-line ones, exactly as
// published), every verdict right and no false "undeliverable"; a reply that breaks RFC 5321 §4.2 ends the session as a
// protocol error; a SOCKS proxy that is down answers proxy_failed, logged at warn, shown in /readyz (item 4); the per-key
// daily SMTP quota refuses a single request or a whole bulk before anything is verified (item 5).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS, codeOf, type CorpusReply } from '../fixtures/smtp-replies/corpus.js';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startSmtpFixture, type SmtpFixture, smtpCheckEnv } from '../support/smtp-fixture.js';
import { startSocks5Server } from '../support/socks5-server.js';

const HOSTS = { oneLine: '127.0.0.30', multiLine: '127.0.0.31', broken: '127.0.0.32' } as const;

const mxAt = (domain: string, ip: string): Zone => ({
  [domain]: [{ type: 'MX', data: { preference: 10, exchange: `mx.${domain}` } }],
  [`mx.${domain}`]: [{ type: 'A', data: ip }],
});

const byId = new Map(CORPUS.map((r) => [r.id, r]));
const single = CORPUS.filter((r) => r.lines.length === 1);
const multi = CORPUS.filter((r) => r.lines.length > 1);

/** Replies that break RFC 5321 §4.2, by local part; `ok` is answered 250 in the same session. */
const BROKEN: Record<string, string[]> = {
  mixed: ['250-first line says 250', '550 5.1.1 the last line says 550'],
  fourdigits: ['2501 no space after three digits'],
  nocode: ['mailbox accepted'],
};

let dns: TestDnsServer;
let smtp: SmtpFixture;
let h: Harness;
const env = (extra: Record<string, string> = {}) => ({
  ...smtpCheckEnv(dns.port, smtp.port),
  DNS_TIMEOUT_MS: '2000',
  SMTP_TIMEOUT_MS: '10000',
  SMTP_MAX_PER_HOST: '2',
  ...extra,
});

beforeAll(async () => {
  dns = await startDnsServer({ ...mxAt('corpus.test', HOSTS.oneLine), ...mxAt('multi.test', HOSTS.multiLine), ...mxAt('broken.test', HOSTS.broken), ...mxAt('nobody.test', '127.0.0.2') });
  smtp = await startSmtpFixture({
    [HOSTS.oneLine]: {
      rcpt: (local) => {
        const row = byId.get(local);
        return row ? { code: codeOf(row), text: row.lines[0].slice(4) } : null;
      },
    },
    [HOSTS.multiLine]: { rawRcpt: (local) => byId.get(local)?.lines ?? null },
    [HOSTS.broken]: { rawRcpt: (local) => BROKEN[local] ?? null },
  });
  h = await startHarness(env());
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
  await dns?.close();
});

const bulk = async (items: string[], harness = h) => {
  const res = await harness.call('/api/v1/email/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items, smtp: true }) });
  expect(res.status).toBe(200);
  return res.body.results.map((r: any) => r.result.deliverability);
};

describe('the real-reply corpus through the transport', () => {
  const verdicts = new Map<string, { status: string; reason: string; smtpCode: number }>();
  beforeAll(async () => {
    const rows = [...single.map((r) => [r, 'corpus.test'] as const), ...multi.map((r) => [r, 'multi.test'] as const)];
    // A 421 closes the session and sends the recipients after it to the next MX host (ADR 0029), and these domains
    // have one: each 421 row is asked in a request of its own, the others together.
    const closing = rows.filter(([r]) => codeOf(r) === 421);
    const rest = rows.filter(([r]) => codeOf(r) !== 421);
    const answers = await bulk(rest.map(([r, domain]) => `${r.id}@${domain}`));
    rest.forEach(([r], i) => verdicts.set(r.id, answers[i]));
    for (const [r, domain] of closing) verdicts.set(r.id, (await bulk([`${r.id}@${domain}`]))[0]);
  });

  it.each(CORPUS.map((r): [string, string, number, CorpusReply] => [r.id, r.mta, r.lines.length, r]))('%s %s (%i line(s))', (_id, _mta, _n, r) => {
    const v = verdicts.get(r.id)!;
    expect(`${v.status}/${v.reason}`).toBe(r.expected);
    expect(v.smtpCode).toBe(codeOf(r));
  });

  it('answers no row undeliverable that is not', () => {
    const wrong = CORPUS.filter((r) => verdicts.get(r.id)!.status === 'undeliverable' && !r.expected.startsWith('undeliverable'));
    expect(wrong.map((r) => r.id)).toEqual([]);
  });

  it('sent every row to the servers as RCPT TO, never DATA', () => {
    const asked = [...smtp.sessions(HOSTS.oneLine), ...smtp.sessions(HOSTS.multiLine)];
    expect(new Set(asked.flatMap((s) => s.rcpts.map((a) => a.split('@')[0])))).toEqual(new Set(CORPUS.map((r) => r.id)));
    expect(asked.some((s) => s.data)).toBe(false);
  });
});

describe('RFC 5321 §4.2: a reply that breaks the syntax ends the session', () => {
  it.each([
    ['mixed', 'a multi-line reply whose lines carry different codes (250- then 550)'],
    ['fourdigits', 'a reply code of four digits (2501)'],
    ['nocode', 'a line without a code'],
  ])('%s: %s -> unknown/protocol_error', async (local) => {
    const [d] = await bulk([`${local}@broken.test`]);
    expect(d).toMatchObject({ status: 'unknown', reason: 'protocol_error', smtpCode: null });
  });
});

describe('SMTP_PROXY down', () => {
  it('answers unknown/proxy_failed, warns once a minute, and /readyz shows it', async () => {
    // A port nothing listens on: bind one, close it.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const proxied = await startHarness(env({ SMTP_PROXY: `socks5://127.0.0.1:${port}`, LOG_LEVEL: 'info' }));
    try {
      const answers = await bulk(['r01@corpus.test', 'r02@corpus.test'], proxied);
      expect(answers.map((d: any) => `${d.status}/${d.reason}`)).toEqual(['unknown/proxy_failed', 'unknown/proxy_failed']);
      await bulk(['r03@multi.test'], proxied);
      const warnings = proxied.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'SMTP proxy failed');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 40, proxy: `127.0.0.1:${port}` });
      expect(proxied.logs.join('\n')).not.toMatch(/r0[123]@/);
      const ready = await proxied.fetch('/readyz');
      expect(ready.status).toBe(200);
      expect((await ready.json()).degraded.smtpProxy).toMatch(/^SMTP_PROXY 127\.0\.0\.1:\d+ failing since .*ECONNREFUSED/);
    } finally {
      await proxied.close();
    }
  });
});

describe('SMTP_PROXY up, and refusing', () => {
  it('a proxy that refuses the request (RFC 1928 reply 2) is proxy_failed; a destination refused beyond it is connection_failed', async () => {
    const refusing = await startSocks5Server({ refuseAll: true });
    const working = await startSocks5Server();
    const viaRefusing = await startHarness(env({ SMTP_PROXY: `socks5://127.0.0.1:${refusing.port}` }));
    const viaWorking = await startHarness(env({ SMTP_PROXY: `socks5://127.0.0.1:${working.port}` }));
    try {
      expect((await bulk(['r01@corpus.test'], viaRefusing))[0]).toMatchObject({ status: 'unknown', reason: 'proxy_failed' });
      // Nothing listens at 127.0.0.2: the proxy answers "connection refused" (reply 5), which is the MX host's doing.
      expect((await bulk(['x@nobody.test'], viaWorking))[0]).toMatchObject({ status: 'unknown', reason: 'connection_failed' });
      expect(working.connects).toEqual([`127.0.0.2:${smtp.port}`]);
      expect((await viaWorking.fetch('/readyz').then((r) => r.json())).degraded).toBeUndefined();
    } finally {
      await Promise.all([viaRefusing.close(), viaWorking.close()]);
      await Promise.all([refusing.close(), working.close()]);
    }
  });
});

describe('the per-key daily SMTP quota (SMTP_DAILY_PER_KEY, keys CLI --smtp-per-day)', () => {
  const ask = (key: string, path: string, init: RequestInit = {}) => h.call(path, { ...init, key });
  const post = (key: string, items: string[]) =>
    ask(key, '/api/v1/email/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items, smtp: true }) });

  it('a single request over it: 429 SMTP_QUOTA_EXCEEDED with Retry-After, no session opened', async () => {
    const { key } = await h.composition.keyStore.create({ name: 'smtp-one', smtpPerDay: 1 });
    const first = await ask(key, '/api/v1/email?address=q1%40corpus.test&smtp=true');
    expect(first.status).toBe(200);
    const before = smtp.sessions(HOSTS.oneLine).length;
    const second = await ask(key, '/api/v1/email?address=q2%40corpus.test&smtp=true');
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: 'SMTP_QUOTA_EXCEEDED', retryAfter: expect.any(Number) });
    expect(Number(second.headers.get('retry-after'))).toBe(second.body.retryAfter);
    expect(smtp.sessions(HOSTS.oneLine)).toHaveLength(before);
    // Without smtp=true, or for a malformed address (nothing to verify), nothing is charged.
    expect((await ask(key, '/api/v1/email?address=q3%40corpus.test')).status).toBe(200);
    expect((await ask(key, '/api/v1/email?address=not-an-address&smtp=true')).status).toBe(200);
  });

  it('a bulk that does not fit is refused whole, nothing verified; one that fits is answered', async () => {
    const { key } = await h.composition.keyStore.create({ name: 'smtp-bulk', smtpPerDay: 3 });
    const before = smtp.sessions(HOSTS.oneLine).length;
    const refused = await post(key, ['b1@corpus.test', 'b2@corpus.test', 'b3@corpus.test', 'b4@corpus.test', 'malformed']);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'SMTP_QUOTA_EXCEEDED', details: [{ field: 'items', message: '4 addresses need 4 SMTP verifications; 3 would fit now' }] });
    expect(smtp.sessions(HOSTS.oneLine)).toHaveLength(before);
    const fits = await post(key, ['b1@corpus.test', 'b2@corpus.test', 'b3@corpus.test', 'malformed']);
    expect(fits.status).toBe(200);
    expect(fits.body.results.slice(0, 3).map((r: any) => r.result.deliverability.status)).toEqual(['deliverable', 'deliverable', 'deliverable']);
    expect((await ask(key, '/api/v1/usage')).body.smtpDay).toMatchObject({ limit: 3, used: 3, remaining: 0 });
  });

  it('a key with --smtp-per-day 0 may not verify over SMTP at all', async () => {
    const { key } = await h.composition.keyStore.create({ name: 'smtp-none', smtpPerDay: 0 });
    expect((await ask(key, '/api/v1/email?address=z%40corpus.test&smtp=true')).body.code).toBe('SMTP_QUOTA_EXCEEDED');
  });
});
