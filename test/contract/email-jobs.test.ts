// Email verification jobs end to end (issue #56, openapi.yaml tag Jobs) on the embedded queue and on BullMQ with a
// real redis-server (REDIS_URL), the same tests for both: submission as JSON and
// CSV, the worker verifying against real SMTP and DNS servers on loopback, streamed NDJSON and CSV results in order,
// one line per item, repeated items verified once, greylisting asked again, cancellation, quotas, other keys.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadSpec } from '../../src/http/spec.js';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startRedisServer, type TestRedis } from '../support/redis-server.js';
import { startSmtpFixture, type SmtpFixture, smtpCheckEnv } from '../support/smtp-fixture.js';
import { waitFor } from '../support/wait.js';

const HOSTS = { standard: '127.0.0.10', greyOnce: '127.0.0.12', grey: '127.0.0.13', slow: '127.0.0.14' } as const;
const mxAt = (domain: string, ip: string): Zone => ({
  [domain]: [{ type: 'MX', data: { preference: 10, exchange: `mx.${domain}` } }],
  [`mx.${domain}`]: [{ type: 'A', data: ip }],
});
const zone: Zone = { ...mxAt('known.test', HOSTS.standard), ...mxAt('greyonce.test', HOSTS.greyOnce), ...mxAt('grey.test', HOSTS.grey), ...mxAt('slow.test', HOSTS.slow) };

let dns: TestDnsServer;
let smtp: SmtpFixture;
let h: Harness;
let redis: TestRedis | null = null;
/** Addresses the grey-once server has deferred: the first RCPT of each is 450, the next accepted. */
const deferred = new Set<string>();
const { document } = await loadSpec();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv as any);
ajv.addSchema(document, 'openapi');
/** Every streamed line is an EmailJobResultLine of openapi.yaml (the harness checks the JSON answers, not the stream). */
const isLine = ajv.compile({ $ref: 'openapi#/components/schemas/EmailJobResultLine' });

beforeAll(async () => {
  dns = await startDnsServer(zone);
  smtp = await startSmtpFixture({
    [HOSTS.standard]: { users: ['alice', 'bob'] },
    [HOSTS.greyOnce]: {
      rcpt: (local) => {
        if (local.startsWith('q')) return { code: 550, text: '5.1.1 unknown' };
        if (deferred.has(local)) return null;
        deferred.add(local);
        return { code: 450, text: '4.7.1 greylisted, try again later' };
      },
    },
    [HOSTS.grey]: { rcpt: () => ({ code: 450, text: '4.7.1 greylisted' }) },
    [HOSTS.slow]: { users: ['alice'], rcptDelayMs: 400 },
  });
});
afterAll(async () => {
  await smtp?.close();
  await dns?.close();
});
beforeEach(() => smtp.reset());

describe.each(['sqlite', 'redis'])('on the %s queue', (mode) => {
  beforeAll(async () => {
    deferred.clear();
    redis = mode === 'redis' ? await startRedisServer() : null;
    h = await startHarness(
      {
        ...smtpCheckEnv(dns.port, smtp.port),
        JOBS_MAX_ITEMS: '20',
        JOBS_RETRY_DELAYS: '50ms,50ms',
        ...(redis ? { REDIS_URL: redis.url } : {}),
      },
      );
  });
  afterAll(async () => {
    await h?.close();
    await redis?.stop();
  });

  const submit = (body: unknown, key?: string) => h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), key });
  const status = (id: string, key?: string) => h.call(`/api/v1/email/jobs/${id}`, { key });
  const ended = (id: string) => waitFor(async () => ((await status(id)).body.finishedAt ? (await status(id)).body : null), { what: `job ${id} to end` });
  async function results(id: string, query = '', headers: Record<string, string> = {}, key = h.key) {
    const res = await h.fetch(`/api/v1/email/jobs/${id}/results${query}`, { headers: { 'x-api-key': key, ...headers } });
    return { res, text: await res.text() };
  }
  const ndjson = (text: string) =>
    text.split('\n').filter(Boolean).map((l) => {
      const line = JSON.parse(l);
      expect(isLine(line), JSON.stringify(isLine.errors)).toBe(true);
      return line;
    });

  describe('POST /api/v1/email/jobs then GET its status and results', () => {
    it('queues a JSON list (202, Location), verifies it, and streams one line per item in submission order', async () => {
      const items = ['alice@known.test', 'nobody@known.test', 'bob@known.test', 'alice@known.test', 'not an address'];
      const res = await submit({ items, smtp: true });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'queued', total: 5, distinct: 4, processed: 0, smtp: true, startedAt: null });
      expect(res.body.id).toMatch(/^job_[0-9a-f]{32}$/);
      expect(res.body.webhookSecret).toBeUndefined();
      expect(res.headers.get('location')).toBe(`/api/v1/email/jobs/${res.body.id}`);
      const job = await ended(res.body.id);
      expect(job).toMatchObject({ status: 'completed', processed: 5, retriesPending: 0, counts: { deliverable: 3, undeliverable: 1, not_checked: 1, risky: 0, unknown: 0 } });
      const { res: r, text } = await results(res.body.id);
      expect(r.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      expect(r.headers.get('x-job-status')).toBe('completed');
      const lines = ndjson(text);
      expect(lines.map((l) => [l.index, l.email, l.status, l.reason, l.attempts])).toEqual([
        [0, 'alice@known.test', 'deliverable', 'accepted', 1],
        [1, 'nobody@known.test', 'undeliverable', 'mailbox_not_found', 1],
        [2, 'bob@known.test', 'deliverable', 'accepted', 1],
        [3, 'alice@known.test', 'deliverable', 'accepted', 1],
        [4, 'not an address', 'not_checked', 'invalid_format', 1],
      ]);
      // Each line's result is what validateEmail answers for it.
      const single = await h.call('/api/v1/email?address=nobody%40known.test&smtp=true');
      expect(lines[1].result).toEqual(single.body);
      // The repeated address was asked once.
      const rcpts = smtp.sessions(HOSTS.standard).flatMap((s) => s.rcpts).filter((a) => a === 'alice@known.test');
      expect(rcpts).toHaveLength(1);
    });

    it('takes a CSV upload: the email column of its header row, smtp from the query; results as CSV on Accept: text/csv', async () => {
      const csv = 'Name,E-Mail,Email\r\n"Doe, Jane",x,alice@known.test\r\n\r\nBob,y,nobody@known.test\r\n';
      const res = await h.call('/api/v1/email/jobs?smtp=true', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: csv });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ total: 2, smtp: true });
      await ended(res.body.id);
      const { res: r, text } = await results(res.body.id, '', { accept: 'text/csv' });
      expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
      expect(text.split('\r\n')).toEqual([
        'index,email,attempts,status,reason,valid_format,mx_record,a_record,role_address,disposable_email,free_email_provider,did_you_mean,catch_all,mx_host,smtp_code,enhanced_code',
        '0,alice@known.test,1,deliverable,accepted,true,true,false,false,false,false,,false,mx.known.test,250,',
        '1,nobody@known.test,1,undeliverable,mailbox_not_found,true,true,false,true,false,false,,false,mx.known.test,550,5.1.1',
        '',
      ]);
    });

    it('takes the first column of a CSV without an email column, and refuses a malformed one naming the line', async () => {
      const first = await h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'address,name\nalice@known.test,A\n' });
      expect(first.status).toBe(202);
      expect(first.body).toMatchObject({ total: 1, smtp: false });
      const bad = await h.call('/api/v1/email/jobs', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'email\n"alice@known.test\n' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'body', message: 'line 2: a quoted field is not closed' }] });
    });

    it('filters the lines by status=', async () => {
      const res = await submit({ items: ['alice@known.test', 'nobody@known.test'], smtp: true });
      await ended(res.body.id);
      const lines = ndjson((await results(res.body.id, '?status=undeliverable')).text);
      expect(lines.map((l) => l.index)).toEqual([1]);
    });

    it('asks a greylisting server again after JOBS_RETRY_DELAYS: the line says how many attempts it took', async () => {
      const res = await submit({ items: ['carol@greyonce.test', 'dave@grey.test'], smtp: true });
      const job = await ended(res.body.id);
      expect(job.counts).toMatchObject({ deliverable: 1, unknown: 1 });
      const lines = ndjson((await results(res.body.id)).text);
      expect(lines.map((l) => [l.email, l.status, l.reason, l.attempts])).toEqual([
        ['carol@greyonce.test', 'deliverable', 'accepted', 2],
        // Out of retries (two delays: three attempts), it stays unknown/greylisted.
        ['dave@grey.test', 'unknown', 'greylisted', 3],
      ]);
      // Each attempt was a session of its own.
      expect(smtp.sessions(HOSTS.grey)).toHaveLength(3);
    });
  });

  describe('cancel, quotas, limits and other keys', () => {
    it('DELETE cancels: items not verified yet become not_checked/cancelled, and the quota is not refunded', async () => {
      const items = ['alice@slow.test', ...Array.from({ length: 9 }, (_, i) => `u${i}@slow.test`)];
      const res = await submit({ items, smtp: true });
      await waitFor(async () => (await status(res.body.id)).body.status === 'running', { what: 'the job to start' });
      const usedBefore = (await h.call('/api/v1/usage')).body.day.used;
      const cancelled = await h.call(`/api/v1/email/jobs/${res.body.id}`, { method: 'DELETE' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: 'cancelled', processed: 10 });
      // The DELETE counts as one request; the ten items charged at submission stay charged.
      expect((await h.call('/api/v1/usage')).body.day.used).toBe(usedBefore + 1);
      const lines = ndjson((await results(res.body.id)).text);
      expect(lines.map((l) => l.index)).toEqual(items.map((_, i) => i));
      expect(lines.filter((l) => l.reason === 'cancelled').every((l) => l.status === 'not_checked' && l.result === null && l.attempts === 0)).toBe(true);
      expect(lines.some((l) => l.reason === 'cancelled')).toBe(true);
      // Cancelling again answers the ended job as it is.
      expect((await h.call(`/api/v1/email/jobs/${res.body.id}`, { method: 'DELETE' })).body).toEqual(cancelled.body);
    });

    it('charges every item against the daily quota at submission; a job that does not fit is refused whole (429), nothing queued', async () => {
      const small = await h.composition.keyStore.create({ name: 'jobs-small', perDay: 6 });
      await h.composition.keys.refresh();
      const fits = await submit({ items: ['a@known.test', 'b@known.test'] }, small.key);
      expect(fits.status).toBe(202);
      // One for the request, two for the items.
      expect(fits.headers.get('x-quota-daily-remaining')).toBe('3');
      const over = await submit({ items: ['a@known.test', 'b@known.test', 'c@known.test'] }, small.key);
      expect(over.status).toBe(429);
      expect(over.body).toMatchObject({ code: 'DAILY_QUOTA_EXCEEDED' });
      expect(over.body.message).toContain('2 of the 3 items would fit now');
      const usage = await h.call('/api/v1/usage', { key: small.key });
      expect(usage.body.day.used).toBe(4);
    });

    it('refuses more than JOBS_MAX_ITEMS items with 400 naming the limit', async () => {
      const res = await submit({ items: Array.from({ length: 21 }, (_, i) => `u${i}@known.test`) });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'items', message: 'must hold at most 20 items (JOBS_MAX_ITEMS), not 21' }] });
    });

    it("answers 404 RESOURCE_NOT_FOUND to another key for the status, the results and a cancel", async () => {
      const res = await submit({ items: ['alice@known.test'] });
      const other = await h.createKey('jobs-other');
      expect((await status(res.body.id, other.key)).body).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND' });
      expect((await h.call(`/api/v1/email/jobs/${res.body.id}`, { method: 'DELETE', key: other.key })).status).toBe(404);
      expect((await results(res.body.id, '', {}, other.key)).res.status).toBe(404);
      expect((await status('job_00000000000000000000000000000000')).status).toBe(404);
      expect((await status('job_nothex')).body.code).toBe('INVALID_FORMAT');
    });

    it('returns a webhook secret once, at creation, when a webhookUrl is given', async () => {
      const res = await submit({ items: ['alice@known.test'], webhookUrl: 'http://127.0.0.1:9/hook' });
      expect(res.body.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect((await status(res.body.id)).body.webhookSecret).toBeUndefined();
    });

    it('never logs a submitted address (info and above), whatever happened to the items', () => {
      const lines = h.logs.map((l) => JSON.parse(l) as { level: number }).filter((l) => l.level >= 30).map((l) => JSON.stringify(l));
      expect(lines.length).toBeGreaterThan(0);
      for (const address of ['alice@known.test', 'nobody@known.test', 'carol@greyonce.test', 'dave@grey.test', 'u0@slow.test']) {
        expect(lines.filter((l) => l.includes(address))).toEqual([]);
      }
    });

    it('never stores a card number typed into the list: the line shows it masked', async () => {
      const res = await submit({ items: ['4111111111111111@known.test'] });
      await ended(res.body.id);
      const { text } = await results(res.body.id);
      expect(text).not.toContain('4111111111111111');
      expect(ndjson(text)[0].email).toBe('************1111@known.test');
    });
  });
});
