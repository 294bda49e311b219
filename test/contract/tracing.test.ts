// Traces exported to a real OTLP/HTTP receiver on loopback (the SDK's own protobuf exporter, as in production): the
// span tree of an IBAN, a DNS and a password request, an incoming traceparent continued, the trace id in the access
// log, and no password, card number, API key or email address in any exported byte.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startRedisServer, type TestRedis } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const PASSWORD = 'correct horse tracing staple 7!';
const CARD = '4111111111111111';
const EMAIL = 'alice.tracer@example.test';
let receiver: OtlpReceiver;
let dns: TestDnsServer;
let redis: TestRedis;
let range: Server;
const rangeHeaders: Record<string, string | string[] | undefined>[] = [];
let h: Harness;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  redis = await startRedisServer();
  range = createServer((req, res) => {
    rangeHeaders.push(req.headers);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('0018A45C4D1DEF81644B54AB7F969B88D65:3');
  });
  await new Promise<void>((r) => range.listen(0, '127.0.0.1', () => r()));
  dns = await startDnsServer({
    'range.pwned.test': [{ type: 'A', data: '127.0.0.1' }],
    'example.test': [{ type: 'A', data: '192.0.2.1' }, { type: 'MX', data: { preference: 10, exchange: 'mx.example.test' } }],
  });
  // The OTel variables an operator sets; the exporter reads them from the process environment.
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test' });
  h = await startHarness(
    {
      REDIS_URL: redis.url,
      PWNED_PASSWORDS_URL: `http://range.pwned.test:${(range.address() as AddressInfo).port}`,
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      ALLOW_PRIVATE_TARGETS: 'true',
    },
    { tracingEnv: process.env },
  );
});
afterAll(async () => {
  await h?.close(); // flushes the last spans
  await new Promise<void>((r) => range.close(() => r()));
  await dns?.close();
  await redis?.stop();
  await receiver?.close();
});

/** The spans of one trace, once its server span has arrived (children end first, so they are in by then). */
async function traceOf(traceId: string): Promise<ReceivedSpan[]> {
  await waitFor(() => receiver.spans.some((s) => s.traceId === traceId && s.kind === 2), { timeoutMs: 10_000, what: `trace ${traceId}` });
  return receiver.spans.filter((s) => s.traceId === traceId);
}
const traceIdOfLastLine = (operationId: string): string => {
  const line = h.logs.map((l) => JSON.parse(l)).filter((l) => l.operationId === operationId).pop();
  expect(line?.traceId, `access log line of ${operationId}`).toMatch(/^[0-9a-f]{32}$/);
  return line.traceId;
};
const server = (spans: ReceivedSpan[]) => spans.find((s) => s.kind === 2)!;
const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);

describe('tracing: spans exported over OTLP/HTTP', () => {
  it('an IBAN request: one server span named by operationId, the limit counted in Redis beneath it', async () => {
    const res = await h.call('/api/v1/iban/DE89370400440532013000');
    expect(res.status).toBe(200);
    const spans = await traceOf(traceIdOfLastLine('validateIban'));
    const root = server(spans);
    expect(root.name).toBe('validateIban');
    expect(root.parentSpanId).toBe('');
    expect(root.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/api/v1/iban/{iban}', 'http.response.status_code': 200 });
    expect(root.resource).toMatchObject({ 'service.name': 'validation-api', 'deployment.environment.name': 'test' });
    const redisSpans = childrenOf(spans, root);
    expect(redisSpans.length).toBeGreaterThan(0);
    for (const s of redisSpans) {
      expect(s).toMatchObject({ name: 'EVALSHA', kind: 3 });
      expect(s.attributes).toMatchObject({ 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'server.address': '127.0.0.1', 'server.port': redis.port });
    }
    expect(spans).toHaveLength(1 + redisSpans.length);
  });

  it('a DNS request: a client span per query the resolvers answered', async () => {
    const res = await h.call('/api/v1/dns/example.test?type=A');
    expect(res.status).toBe(200);
    const spans = await traceOf(traceIdOfLastLine('lookupDns'));
    const root = server(spans);
    expect(root.name).toBe('lookupDns');
    const queries = childrenOf(spans, root).filter((s) => s.name.startsWith('DNS '));
    expect(queries.map((q) => q.name)).toContain('DNS A');
    for (const q of queries) expect(q.attributes).toMatchObject({ 'dns.question.name': expect.stringMatching(/(^|\.)test$/), 'server.address': '127.0.0.1', 'server.port': dns.port, 'network.transport': 'udp' });
  });

  it('a password request: the range fetch beneath the server span, with traceparent sent to the range API', async () => {
    const res = await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
    expect(res.status).toBe(200);
    const traceId = traceIdOfLastLine('checkPasswordStrength');
    const spans = await traceOf(traceId);
    const root = server(spans);
    expect(root.name).toBe('checkPasswordStrength');
    const fetchSpan = childrenOf(spans, root).find((s) => s.name === 'GET /range/{prefix}')!;
    expect(fetchSpan.attributes).toMatchObject({ 'http.request.method': 'GET', 'url.template': '/range/{prefix}', 'server.address': 'range.pwned.test' });
    // The range host is named through DNS_SERVERS: its lookup is a span of the fetch.
    expect(childrenOf(spans, fetchSpan).map((s) => s.name)).toContain('DNS A');
    // W3C Trace Context out: the range API saw this trace and the fetch span as its parent.
    expect(rangeHeaders.at(-1)!.traceparent).toBe(`00-${traceId}-${fetchSpan.spanId}-01`);
    if (process.env.PRINT_TRACE) for (const s of spans) console.log(`${s.name.padEnd(24)} ${(Number(s.endNs - s.startNs) / 1e6).toFixed(2)} ms parent=${s.parentSpanId || '-'} id=${s.spanId}`);
  });

  it("continues an incoming traceparent: the server span is the caller's span's child", async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const res = await h.call('/api/v1/bic/DEUTDEFF', { headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` } });
    expect(res.status).toBe(200);
    expect(traceIdOfLastLine('validateBic')).toBe(callerTrace);
    const root = server(await traceOf(callerTrace));
    expect(root).toMatchObject({ name: 'validateBic', parentSpanId: callerSpan });
  });

  it('no password, card number, API key or email address in any exported byte', async () => {
    expect((await h.call('/api/v1/creditcard/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cardNumber: CARD }) })).status).toBe(200);
    expect((await h.call(`/api/v1/email?address=${encodeURIComponent(EMAIL)}`)).status).toBe(200);
    await h.call('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
    const last = h.logs.map((l) => JSON.parse(l)).filter((l) => l.traceId).pop();
    await traceOf(last.traceId);
    const all = Buffer.concat(receiver.bodies);
    expect(receiver.bodies.length).toBeGreaterThan(0);
    const sha1 = createHash('sha1').update(PASSWORD).digest('hex').toUpperCase();
    for (const secret of [PASSWORD, CARD, CARD.slice(0, 12), h.key, EMAIL, encodeURIComponent(EMAIL), 'alice.tracer', sha1, sha1.slice(0, 5)]) {
      expect(all.includes(Buffer.from(secret)), secret).toBe(false);
      expect(all.includes(Buffer.from(secret.toLowerCase())), secret.toLowerCase()).toBe(false);
    }
  });
});
