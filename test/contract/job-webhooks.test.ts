// Job webhooks (openapi.yaml createEmailJob, "Webhook"): a receiver on loopback checks every delivery's Standard
// Webhooks signature with the reference library (npm standardwebhooks), answers the first one 500 and gets it again
// after JOBS_WEBHOOK_RETRY_DELAYS under the same message id; a cancelled job's webhook says so; the outbound guard
// refuses a private address when private targets are not allowed.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookSender } from '../../src/adapters/jobs/webhook.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let dns: TestDnsServer;
let h: Harness;
let receiver: Server;
let base: string;
const deliveries: Delivery[] = [];
/** Paths whose first delivery is answered 500. */
const failFirst = new Set(['/flaky']);

beforeAll(async () => {
  dns = await startDnsServer({ 'known.test': [{ type: 'A', data: '192.0.2.1' }, { type: 'MX', data: { preference: 10, exchange: 'mx.known.test' } }] });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const fail = failFirst.delete(req.url ?? '');
      res.writeHead(fail ? 500 : 204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  h = await startHarness(
    { DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '2000', ALLOW_PRIVATE_TARGETS: 'true', JOBS_WEBHOOK_RETRY_DELAYS: '100ms,100ms' },
  );
});
afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await dns?.close();
});

const submit = (body: unknown) => h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const to = (path: string) => deliveries.filter((d) => d.path === path);
/** The delivery verified as a Standard Webhooks receiver does (signature, timestamp tolerance); its payload. */
const verified = (secret: string, d: Delivery) => new Webhook(secret).verify(d.body, d.headers as Record<string, string>);

describe('job webhooks', () => {
  it('POSTs the ended job signed with the secret given at creation; a failed delivery is sent again with the same id', async () => {
    const res = await submit({ items: ['jane@known.test', 'bad address'], webhookUrl: `${base}/flaky` });
    const secret = res.body.webhookSecret;
    const [first, second] = await waitFor(() => (to('/flaky').length >= 2 ? to('/flaky') : null), { what: 'the retried webhook' });
    for (const d of [first, second]) {
      expect(d.headers['content-type']).toBe('application/json');
      expect(verified(secret, d)).toMatchObject({ id: res.body.id, status: 'completed', total: 2, processed: 2 });
    }
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    // The payload is the status object GET answers, nothing more (no secret, no owner, no URL).
    expect(JSON.parse(second.body)).toEqual((await h.call(`/api/v1/email/jobs/${res.body.id}`)).body);
  });

  it('a receiver with another secret, or a body changed on the way, refuses the delivery', async () => {
    const res = await submit({ items: ['jane@known.test'], webhookUrl: `${base}/check` });
    const [d] = await waitFor(() => (to('/check').length ? to('/check') : null), { what: 'the webhook' });
    expect(() => verified(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, d)).toThrow();
    expect(() => verified(res.body.webhookSecret, { ...d, body: d.body.replace('completed', 'cancelled') })).toThrow();
  });

  it('sends the webhook of a cancelled job, with its status cancelled', async () => {
    // The DNS server stops answering (a domain not asked before, so nothing is cached): the worker holds the items
    // until the job is cancelled.
    dns.setMode('silent');
    try {
      const res = await submit({ items: Array.from({ length: 5 }, (_, i) => `u${i}@unasked.test`), webhookUrl: `${base}/cancelled` });
      await waitFor(async () => (await h.call(`/api/v1/email/jobs/${res.body.id}`)).body.status === 'running', { what: 'the job to start' });
      await h.call(`/api/v1/email/jobs/${res.body.id}`, { method: 'DELETE' });
      const [d] = await waitFor(() => (to('/cancelled').length ? to('/cancelled') : null), { what: 'the webhook' });
      expect(verified(res.body.webhookSecret, d)).toMatchObject({ id: res.body.id, status: 'cancelled', processed: 5, counts: { not_checked: 5 } });
    } finally {
      dns.setMode('normal');
    }
  });

  it('goes through the outbound target guard: a private address is refused unless private targets are allowed', async () => {
    const resolve = async () => ['127.0.0.1'];
    const send = (allowPrivate: boolean) =>
      createWebhookSender({ resolve, allowPrivate, timeoutMs: 5000 })({ url: `${base.replace('127.0.0.1', 'hooks.example.com')}/guarded`, secret: 'whsec_AAAA', id: 'msg_1', body: '{}' });
    expect(await send(false)).toEqual({ ok: false, why: 'the webhook host resolves to a non-public address' });
    expect(to('/guarded')).toHaveLength(0);
    expect(await send(true)).toEqual({ ok: true });
    expect(to('/guarded')[0].headers.host).toBe(`hooks.example.com:${(receiver.address() as AddressInfo).port}`);
  });
});
