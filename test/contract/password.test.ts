// POST /api/v1/password/strength end to end, against a real range server on 127.0.0.1 named through DNS_SERVERS; the password never leaks.
// @module-tag slow (left out of make test-fast): loads zxcvbn in worker threads
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const BREACHED = 'P@ssw0rd';
const STRONG = 'violet-Harbour-71-quietly';
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex').toUpperCase();

let rangeServer: Server;
const seen: Array<{ url: string; padding: string | undefined; body: string }> = [];
let failWith: number | null = null;
let h: Harness;
let dns: TestDnsServer;

beforeAll(async () => {
  rangeServer = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', padding: req.headers['add-padding'] as string | undefined, body });
      if (failWith) return void res.writeHead(failWith).end();
      const prefix = (req.url ?? '').split('/').pop()!;
      const rows = ['0018A45C4D1DEF81644B54AB7F969B88D65:3', 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:0'];
      const breached = sha1(BREACHED);
      if (breached.startsWith(prefix)) rows.push(`${breached.slice(5)}:442781`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(rows.join('\r\n'));
    });
  });
  await new Promise<void>((r) => rangeServer.listen(0, '127.0.0.1', () => r()));
  const port = (rangeServer.address() as AddressInfo).port;
  // The range host is a name only the test DNS server knows: the service must resolve it through DNS_SERVERS.
  dns = await startDnsServer({ 'range.pwned.test': [{ type: 'A', data: '127.0.0.1' }] });
  h = await startHarness({ PWNED_PASSWORDS_URL: `http://range.pwned.test:${port}`, PWNED_TIMEOUT_MS: '10000', DNS_SERVERS: `127.0.0.1:${dns.port}` });
});
afterAll(async () => {
  await h.close();
  await dns.close();
  await new Promise<void>((r) => rangeServer.close(() => r()));
});

const check = (password: unknown) =>
  h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) });

describe('POST /api/v1/password/strength', () => {
  it('flags a breached password, caps its score at 1 and says why', async () => {
    const res = await check(BREACHED);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ breached: true, breachCount: 442781 });
    expect(res.body.score).toBeLessThanOrEqual(1);
    expect(res.body.warning).toMatch(/data breach/);
  });

  it('scores a strong password that is not breached', async () => {
    const res = await check(STRONG);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ breached: false, breachCount: 0 });
    expect(res.body.score).toBeGreaterThanOrEqual(3);
    expect(res.body.crackTimeSeconds).toBeGreaterThan(0);
  });

  it('sends only the 5-character SHA-1 prefix, with Add-Padding, and nothing else', async () => {
    const before = seen.length;
    const pw = 'only-the-prefix-leaves-7Q';
    await check(pw);
    const sent = seen.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0].url).toBe(`/range/${sha1(pw).slice(0, 5)}`);
    expect(sent[0].padding).toBe('true');
    expect(sent[0].body).toBe('');
  });

  it('answers 502 when the range service fails, never a silent not-breached', async () => {
    failWith = 503;
    try {
      const res = await check('a-fresh-password-for-502!');
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
    } finally {
      failWith = null;
    }
  });

  it.each([
    ['missing', undefined, 'MISSING_PARAMETER'],
    ['empty', '', 'INVALID_FORMAT'],
    ['a number', 12345678, 'INVALID_FORMAT'],
  ])('answers 400 for a %s password', async (_label, password, code) => {
    const res = await check(password);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(code);
  });

  it('keeps every password out of responses other than as a verdict, and out of every log line', async () => {
    const secret = 'Tr0ub4dor&3-never-logged';
    const res = await check(secret);
    expect(res.text).not.toContain(secret);
    h.composition.deps.logger.flush();
    const all = await waitFor(() => h.logs.some((l) => l.includes('checkPasswordStrength')) && h.logs.join('\n'), { what: 'the access log line' });
    expect(all).toContain('checkPasswordStrength');
    for (const pw of [secret, BREACHED, STRONG]) {
      expect(all).not.toContain(pw);
      expect(all).not.toContain(sha1(pw));
      expect(all).not.toContain(sha1(pw).slice(5));
    }
  });
});
