// SMTP verification keeps addresses to itself (issue #55, HOUSE.md privacy): verifications of every kind (accepted,
// catch-all, refused by policy, refused at the greeting, cancelled by the deadline) with tracing on and LOG_LEVEL=info,
// then every exported span byte, the /metrics text and every log line are scanned for the addresses, their local parts
// and the probes' local parts: zero hits. The SMTP spans carry the MX host, the dialled IP, the reply codes and TLS.
// @module-tag slow (left out of make test-fast): sets OTEL_* in process.env
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { startSmtpFixture, type SmtpFixture, smtpCheckEnv } from '../support/smtp-fixture.js';
import { waitFor } from '../support/wait.js';

const IP = { accepting: '127.0.0.40', catchAll: '127.0.0.41', policy: '127.0.0.42', banned: '127.0.0.43', silent: '127.0.0.44' };
const mxAt = (domain: string, ip: string): Zone => ({
  [domain]: [{ type: 'MX', data: { preference: 10, exchange: `mx.${domain}` } }],
  [`mx.${domain}`]: [{ type: 'A', data: ip }],
});
const ADDRESSES = ['carla.private@accepting.test', 'nobody.secret@accepting.test', 'dieter.hidden@catchall.test', 'erin.veiled@policy.test', 'frank.masked@banned.test', 'gita.quiet@silent.test'];
const LOCAL_PARTS = ADDRESSES.map((a) => a.split('@')[0]);

let dns: TestDnsServer;
let smtp: SmtpFixture;
let receiver: OtlpReceiver;
let h: Harness;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  dns = await startDnsServer({ ...mxAt('accepting.test', IP.accepting), ...mxAt('catchall.test', IP.catchAll), ...mxAt('policy.test', IP.policy), ...mxAt('banned.test', IP.banned), ...mxAt('silent.test', IP.silent) });
  smtp = await startSmtpFixture({
    [IP.accepting]: { users: ['carla.private'], starttls: true },
    [IP.catchAll]: { rcpt: () => null },
    [IP.policy]: { rcpt: () => ({ code: 550, text: '5.7.1 client blocked' }) },
    [IP.banned]: { greeting: { code: 554, text: '5.7.1 listed' } },
    [IP.silent]: { silent: true },
  });
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
  h = await startHarness(
    {
      ...smtpCheckEnv(dns.port, smtp.port),
      LOG_LEVEL: 'info',
      // The silent host ends at the per-session limit; the deadline leaves a loaded machine room for the TLS session.
      SMTP_TIMEOUT_MS: '2000',
      SMTP_DEADLINE_MS: '10000',
    },
    { tracingEnv: process.env },
  );
  for (const address of ADDRESSES) expect((await h.call(`/api/v1/email?address=${encodeURIComponent(address)}&smtp=true`)).status).toBe(200);
  const bulk = await h.call('/api/v1/email/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: ADDRESSES.map((a) => `x${a}`), smtp: true }) });
  expect(bulk.status).toBe(200);
});
afterAll(async () => {
  await h?.close(); // flushes the last spans
  await smtp?.close();
  await dns?.close();
  await receiver?.close();
});

/** Every address asked, its local part, and the probes' local parts the fixture saw. */
function needles(): string[] {
  const probes = Object.values(IP).flatMap((ip) => smtp.sessions(ip).flatMap((s) => s.rcpts)).map((r) => r.split('@')[0]);
  const all = [...ADDRESSES, ...ADDRESSES.map((a) => `x${a}`), ...LOCAL_PARTS, ...probes];
  return [...new Set([...all, ...all.map(encodeURIComponent)])];
}

describe('SMTP sessions in traces', () => {
  it('one span per session: MX host, dialled IP, reply codes, TLS', async () => {
    await waitFor(() => receiver.spans.some((s) => s.name === 'SMTP session' && s.attributes['server.address'] === 'mx.policy.test'), { what: 'the SMTP spans' });
    const spans = receiver.spans.filter((s) => s.name === 'SMTP session');
    expect(spans.find((s) => s.attributes['server.address'] === 'mx.accepting.test')!.attributes).toMatchObject({ 'network.peer.address': IP.accepting, 'smtp.tls': true, 'smtp.outcome': 'answered' });
    expect(spans.find((s) => s.attributes['server.address'] === 'mx.policy.test')!.attributes).toMatchObject({ 'network.peer.address': IP.policy, 'smtp.rcpt.codes': '550' });
    expect(spans.find((s) => s.attributes['server.address'] === 'mx.banned.test')!.attributes).toMatchObject({ 'smtp.stage': 'greeting', 'smtp.reply.code': 554 });
  });
});

describe('zero hits', () => {
  it('in every exported span byte', async () => {
    await waitFor(() => receiver.spans.some((s) => s.name === 'SMTP session'), { what: 'the SMTP spans' });
    const bytes = Buffer.concat(receiver.bodies);
    expect(needles().filter((n) => bytes.includes(Buffer.from(n)))).toEqual([]);
  });

  it('in /metrics, which counts verdicts and sessions by fixed labels', async () => {
    const text = await (await h.fetch('/metrics')).text();
    expect(text).toMatch(/smtp_verifications_total\{status="unknown",reason="blocked"\} [1-9]/);
    expect(text).toMatch(/smtp_sessions_total\{outcome="blocked"\} [1-9]/);
    expect(needles().filter((n) => text.includes(n))).toEqual([]);
  });

  it('in every log line at info level', () => {
    const logs = h.logs.join('\n');
    expect(needles().filter((n) => logs.includes(n))).toEqual([]);
  });
});
