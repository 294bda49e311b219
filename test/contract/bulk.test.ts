// POST /api/v1/iban/bulk, bic/bulk, email/bulk end to end (openapi.yaml, validateIbans, validateBics, validateEmails):
// order, per-item results and errors equal to the single operations', N units against the limits, the item cap,
// one DNS resolution per distinct domain (counted on a real DNS server), and card numbers never echoed or logged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';

const MAX = 50;
const zone: Zone = {
  'mail.test': [
    { type: 'A', data: '192.0.2.10' },
    { type: 'MX', data: { preference: 10, exchange: 'mx1.mail.test' } },
  ],
  // TTL 0: never cached by the resolver, so only the bulk operation's own sharing keeps it to one question.
  'zero.test': [
    { type: 'A', data: '192.0.2.11', ttl: 0 },
    { type: 'MX', data: { preference: 10, exchange: 'mx.zero.test' }, ttl: 0 },
  ],
  'other.test': [{ type: 'A', data: '192.0.2.12', ttl: 0 }],
  'third.test': [{ type: 'A', data: '192.0.2.13', ttl: 0 }],
};

let dns: TestDnsServer;
let h: Harness;
beforeAll(async () => {
  dns = await startDnsServer(zone);
  h = await startHarness({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '10000', BULK_MAX_ITEMS: String(MAX) });
});
afterAll(async () => {
  await h?.close();
  await dns?.close();
});

const post = (path: string, items: unknown, key?: string) =>
  h.call(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items }), key });

/** What the single operation answers for one input, as a bulk element. */
async function single(path: string): Promise<unknown> {
  const res = await h.call(path);
  if (res.status === 200) return { status: 200, result: res.body };
  return { status: res.status, error: { code: res.body.code, message: res.body.message, details: res.body.details } };
}

async function keyWith(limits: { perMinute?: number; perDay?: number; perMonth?: number }): Promise<string> {
  const { key } = await h.composition.keyStore.create({ name: 'bulk-limits', ...limits });
  await h.composition.keys.refresh();
  return key;
}

describe('POST /api/v1/iban/bulk', () => {
  const items = ['DE89 3704 0044 0532 0130 00', 'DE88370400440532013000', 'DE89/3704', 'GB82WEST12345698765432', '', 'X'.repeat(65)];

  it('answers every item in input order with what GET /api/v1/iban/{iban} answers for it', async () => {
    const res = await post('/api/v1/iban/bulk', items);
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(items.length);
    const expected = [];
    for (const iban of items) expected.push(iban === '' ? null : await single(`/api/v1/iban/${encodeURIComponent(iban)}`));
    // An empty path segment cannot be sent to the single operation: its schema (minLength 1) refuses it as INVALID_FORMAT.
    expected[4] = { status: 400, error: { code: 'INVALID_FORMAT', message: 'parameter iban is malformed: must be 1-64 letters, digits, spaces or dashes', details: [{ field: 'iban', message: 'must be 1-64 letters, digits, spaces or dashes' }] } };
    expect(res.body.results).toEqual(expected);
    expect(res.body.results.map((r: any) => r.status)).toEqual([200, 200, 400, 200, 400, 400]);
    expect(res.body.results[1].result.valid).toBe(false);
  });

  it('refuses a body that is not {items: [string, ...]} as a whole, as the validator does', async () => {
    expect((await post('/api/v1/iban/bulk', [])).body.code).toBe('INVALID_FORMAT');
    expect((await post('/api/v1/iban/bulk', [42])).status).toBe(400);
    const missing = await h.call('/api/v1/iban/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(missing.body).toMatchObject({ status: 400, code: 'MISSING_PARAMETER' });
  });

  it(`refuses more than BULK_MAX_ITEMS (${MAX}) items with 400 naming the limit, counted as one request`, async () => {
    const key = await keyWith({ perMinute: 100 });
    const res = await post('/api/v1/iban/bulk', Array(MAX + 1).fill('DE89370400440532013000'), key);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.body.message).toContain(`at most ${MAX} items`);
    expect(res.body.details).toEqual([{ field: 'items', message: `must hold at most ${MAX} items (BULK_MAX_ITEMS), not ${MAX + 1}` }]);
    expect(res.headers.get('ratelimit-remaining')).toBe('99');
    const ok = await post('/api/v1/iban/bulk', Array(MAX).fill('DE89370400440532013000'), key);
    expect(ok.status).toBe(200);
    expect(ok.body.results).toHaveLength(MAX);
  });
});

describe('the body limit of a bulk operation fits BULK_MAX_ITEMS maximal items', () => {
  it('takes a body over the single operations\' 16 KiB when its items are within their schema', async () => {
    const items = Array.from({ length: MAX }, (_, i) => `${'é'.repeat(310)}${i}@a.test`.slice(0, 320));
    const body = JSON.stringify({ items });
    expect(Buffer.byteLength(body)).toBeGreaterThan(16 * 1024);
    const res = await post('/api/v1/email/bulk', items);
    expect(res.status).toBe(200);
    expect(res.body.results.every((r: any) => r.status === 200 && r.result.validFormat === false)).toBe(true);
  });

  it('answers 413 beyond it, naming the limit: per item 4 bytes a character of the longest input, quotes and comma, plus 1 KiB', async () => {
    const limit = MAX * (4 * 320 + 3) + 1024;
    const res = await post('/api/v1/email/bulk', Array(MAX).fill('x'.repeat(1400)));
    expect(res.status).toBe(413);
    expect(res.body.message).toBe(`request body is larger than ${limit} bytes`);
  });
});

describe('POST /api/v1/bic/bulk', () => {
  it('answers in order with what GET /api/v1/bic/{bic} answers', async () => {
    const items = ['DEUTDEFF', '!!', 'DEUTZZFF500', 'deut de ff 500'];
    const res = await post('/api/v1/bic/bulk', items);
    expect(res.status).toBe(200);
    const expected = [];
    for (const bic of items) expected.push(await single(`/api/v1/bic/${encodeURIComponent(bic)}`));
    expect(res.body.results).toEqual(expected);
    expect(res.body.results.map((r: any) => r.status)).toEqual([200, 400, 200, 200]);
  });
});

describe('the limits: a bulk request counts one request per item, all or nothing', () => {
  it('counts N units in the minute, day and month windows', async () => {
    const key = await keyWith({ perMinute: 10, perDay: 100, perMonth: 1000 });
    const res = await post('/api/v1/iban/bulk', ['DE89370400440532013000', 'x', 'DEUTDEFF', 'DE89370400440532013000'], key);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('6');
    expect(res.headers.get('x-quota-daily-remaining')).toBe('96');
    expect(res.headers.get('x-quota-monthly-remaining')).toBe('996');
  });

  it('refuses a request that does not fit whole with 429, saying how many items fit, and counts none of it', async () => {
    const key = await keyWith({ perMinute: 10 });
    expect((await post('/api/v1/bic/bulk', Array(4).fill('DEUTDEFF'), key)).status).toBe(200);
    const refused = await post('/api/v1/bic/bulk', Array(7).fill('DEUTDEFF'), key);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.body.message).toContain('6 of the 7 items would fit now');
    expect(refused.body.details).toEqual([{ field: 'items', message: '7 items need 7 requests of the limits; 6 would fit now' }]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-remaining')).toBe('6');
    // Nothing of the refused request was counted: exactly the 6 that fit still pass.
    const fits = await post('/api/v1/bic/bulk', Array(6).fill('DEUTDEFF'), key);
    expect(fits.status).toBe(200);
    expect(fits.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('names the daily quota when that is what refuses', async () => {
    const key = await keyWith({ perMinute: 100, perDay: 3 });
    const refused = await post('/api/v1/email/bulk', ['a@mail.test', 'b@mail.test', 'c@mail.test', 'd@mail.test'], key);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('DAILY_QUOTA_EXCEEDED');
    expect(refused.body.message).toContain('3 of the 4 items would fit now');
  });
});

describe('POST /api/v1/email/bulk', () => {
  it('answers in order with what GET /api/v1/email answers, per-item errors included', async () => {
    const items = ['info@mail.test', 'not-an-address', '', 'jane@other.test', 'x'.repeat(321)];
    const res = await post('/api/v1/email/bulk', items);
    expect(res.status).toBe(200);
    const expected = [];
    for (const address of items) expected.push(await single(`/api/v1/email?address=${encodeURIComponent(address)}`));
    expect(res.body.results).toEqual(expected);
    expect(res.body.results.map((r: any) => r.status)).toEqual([200, 200, 400, 200, 400]);
    expect(res.body.results[0].result).toMatchObject({ mxRecord: true, aRecord: true, roleAddress: true });
  });

  it('resolves each distinct domain once per request, whatever its case', async () => {
    dns.queries.length = 0;
    const items = Array.from({ length: 40 }, (_, i) => `user${i}@${i % 2 ? 'ZERO.test' : 'zero.test'}`).concat(['a@third.test', 'b@Third.Test']);
    const res = await post('/api/v1/email/bulk', items);
    expect(res.status).toBe(200);
    expect(res.body.results.every((r: any) => r.status === 200 && r.result.aRecord)).toBe(true);
    const asked = (name: string, type: string) => dns.queries.filter((q) => q.name === name && q.type === type).length;
    expect([asked('zero.test', 'MX'), asked('zero.test', 'A'), asked('zero.test', 'AAAA')]).toEqual([1, 1, 1]);
    expect([asked('third.test', 'MX'), asked('third.test', 'A'), asked('third.test', 'AAAA')]).toEqual([1, 1, 1]);
  });
});

describe('POST /api/v1/email/bulk when the DNS servers fail', () => {
  it('answers the items of a failing domain with the 502 the single operation gives, the others with their verdicts', async () => {
    dns.setMode('servfail');
    try {
      const res = await post('/api/v1/email/bulk', ['a@down.test', 'not-an-address', 'b@DOWN.test']);
      expect(res.status).toBe(200);
      const one = await single(`/api/v1/email?address=${encodeURIComponent('c@down2.test')}`);
      expect(one).toMatchObject({ status: 502, error: { code: 'UPSTREAM_UNAVAILABLE' } });
      expect(res.body.results[0]).toEqual(one);
      expect(res.body.results[1]).toMatchObject({ status: 200, result: { validFormat: false } });
      expect(res.body.results[2]).toEqual(one);
    } finally {
      dns.setMode('normal');
    }
  });
});

describe('privacy: a card number sent as an item', () => {
  const CARD = '4012888888881881';
  const printed = '4012 8888 8888 1881';

  it.each([
    ['/api/v1/iban/bulk', [printed, `${printed}!`]],
    ['/api/v1/bic/bulk', [printed, `${CARD}#`]],
    ['/api/v1/email/bulk', [printed, `${CARD}@mail.test`, `${printed}`.padEnd(321, '9')]],
  ])('%s never echoes nor logs it', async (path, items) => {
    const before = h.logs.length;
    const res = await post(path, items);
    expect(res.status).toBe(200);
    const digits = (s: string) => s.replace(/[^0-9]/g, '');
    expect(digits(res.text)).not.toContain(CARD);
    expect(h.logs.slice(before).join('\n')).not.toContain(CARD);
    expect(digits(h.logs.slice(before).join(''))).not.toContain(CARD);
  });
});
