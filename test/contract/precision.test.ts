// Issue #43, items 1-5, black-box: the service through HTTP (the harness) and a real DNS server on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBankDirectory } from '../../src/adapters/bank-data/bank-directory.js';
import { projectPath } from '../../src/http/spec.js';
import { startDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';

const zone: Zone = {
  // Item 1: the organisational domain enforces for itself (p=reject) but not for its subdomains (sp=none)...
  'bimi-sp.example': [{ type: 'A', data: '192.0.2.61' }],
  '_dmarc.bimi-sp.example': [{ type: 'TXT', data: 'v=DMARC1; p=reject; sp=none; rua=mailto:dmarc@bimi-sp.example' }],
  'default._bimi.bimi-sp.example': [{ type: 'TXT', data: 'v=BIMI1; l=https://bimi-sp.example/logo.svg; a=https://bimi-sp.example/vmc.pem' }],
  'news.bimi-sp.example': [{ type: 'A', data: '192.0.2.62' }],
  'default._bimi.news.bimi-sp.example': [{ type: 'TXT', data: 'v=BIMI1; l=https://news.bimi-sp.example/logo.svg; a=https://news.bimi-sp.example/vmc.pem' }],
  // ...and the other way round: monitoring for itself (p=none), enforcing for its subdomains (sp=quarantine).
  'bimi-p.example': [{ type: 'A', data: '192.0.2.63' }],
  '_dmarc.bimi-p.example': [{ type: 'TXT', data: 'v=DMARC1; p=none; sp=quarantine; rua=mailto:dmarc@bimi-p.example' }],
  'news.bimi-p.example': [{ type: 'A', data: '192.0.2.64' }],
  'default._bimi.news.bimi-p.example': [{ type: 'TXT', data: 'v=BIMI1; l=https://news.bimi-p.example/logo.svg; a=https://news.bimi-p.example/vmc.pem' }],
  // Item 2: a name with CAA records of its own.
  'caa.example': [
    { type: 'A', data: '192.0.2.65' },
    { type: 'CAA', data: { flags: 0, tag: 'issue', value: 'ca.example' } },
    { type: 'CAA', data: { flags: 0, tag: 'iodef', value: 'mailto:security@caa.example' } },
  ],
};

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let h: Harness;
beforeAll(async () => {
  dns = await startDnsServer(zone);
  h = await startHarness({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '10000' });
});
afterAll(async () => {
  await h.close();
  await dns.close();
});

describe('item 1: BIMI and every DMARC rule judge the policy that applies to the queried name (RFC 7489 §6.3, §6.6.3)', () => {
  const enforcement = (w: string) => /not at enforcement/.test(w);

  it("a subdomain under the organisational domain's sp=none: BIMI warns, although p=reject", async () => {
    const res = await h.call('/api/v1/dns/news.bimi-sp.example');
    expect(res.status).toBe(200);
    const { dmarc, bimi } = res.body.security;
    expect(dmarc).toMatchObject({ present: true, policy: 'reject', subdomainPolicy: 'none', recordName: '_dmarc.bimi-sp.example' });
    expect(bimi.present).toBe(true);
    expect(bimi.warnings.filter(enforcement)).toEqual([expect.stringContaining('sp=none')]);
    expect(dmarc.warnings).toContainEqual(expect.stringMatching(/^sp=none only monitors/));
  });

  it('the organisational domain itself is judged on its p=reject: no BIMI warning', async () => {
    const res = await h.call('/api/v1/dns/bimi-sp.example');
    const { dmarc, bimi } = res.body.security;
    expect(dmarc).toMatchObject({ policy: 'reject', subdomainPolicy: 'none', recordName: '_dmarc.bimi-sp.example' });
    expect(bimi.warnings.filter(enforcement)).toEqual([]);
    expect(dmarc.warnings.filter((w: string) => /only monitors/.test(w))).toEqual([]);
  });

  it("a subdomain under sp=quarantine is at enforcement although the organisational p=none: no BIMI warning, no p=none warning", async () => {
    const res = await h.call('/api/v1/dns/news.bimi-p.example');
    const { dmarc, bimi } = res.body.security;
    expect(dmarc).toMatchObject({ present: true, policy: 'none', subdomainPolicy: 'quarantine', recordName: '_dmarc.bimi-p.example' });
    expect(bimi.present).toBe(true);
    expect(bimi.warnings.filter(enforcement)).toEqual([]);
    expect(dmarc.warnings.filter((w: string) => /only monitors/.test(w))).toEqual([]);
  });

  it('the organisational domain with p=none still gets the p=none warning', async () => {
    const res = await h.call('/api/v1/dns/bimi-p.example');
    expect(res.body.security.dmarc.warnings).toContainEqual(expect.stringMatching(/^p=none only monitors/));
  });
});

describe('item 2: type=CAA, as lookupDns documents it', () => {
  it("answers the name's own CAA records", async () => {
    const res = await h.call('/api/v1/dns/caa.example?type=CAA');
    expect(res.status).toBe(200);
    expect(res.body.records.map((r: any) => [r.type, r.value]).sort()).toEqual([
      ['CAA', '0 iodef "mailto:security@caa.example"'],
      ['CAA', '0 issue "ca.example"'],
    ]);
  });

  it('takes CAA in a case-insensitive list beside the others', async () => {
    const res = await h.call('/api/v1/dns/caa.example?type=a,%20caa');
    expect(res.status).toBe(200);
    expect([...new Set(res.body.records.map((r: any) => r.type))].sort()).toEqual(['A', 'CAA']);
  });

  it('still refuses a type no record carries, listing CAA among the supported', async () => {
    const res = await h.call('/api/v1/dns/caa.example?type=PTR');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/A, AAAA, MX, TXT, CNAME, NS, SOA, CAA/);
  });
});

describe('item 3: a concrete path is matched before a template (OpenAPI 3.1 Paths Object, Path Templating Matching)', () => {
  it.each([
    ['GET', '/api/v1/bic/bulk'],
    ['GET', '/api/v1/bic/bulk/'],
    ['GET', '/api/v1/iban/bulk'],
    ['OPTIONS', '/api/v1/iban/bulk'],
    ['OPTIONS', '/api/v1/bic/bulk'],
    ['DELETE', '/api/v1/email/bulk'],
  ])('%s %s is 405 with Allow: POST (the bulk operation), never the single lookup', async (method, path) => {
    const res = await h.call(path, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('HEAD /api/v1/bic/bulk is 405 too (HEAD is GET without a body)', async () => {
    const res = await h.fetch(`/api/v1/bic/bulk`, { method: 'HEAD', headers: { 'x-api-key': h.key } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('still serves POST there, and the single lookup beside it', async () => {
    const bulk = await h.call('/api/v1/bic/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: ['DEUTDEFF'] }) });
    expect(bulk.status).toBe(200);
    expect((await h.call('/api/v1/bic/DEUTDEFF')).status).toBe(200);
  });
});

describe('item 4: one order for every request: key, then limits, then the request itself', () => {
  // Malformed before the operation sees them: a repeated query parameter, broken percent-encoding in a path value.
  const MALFORMED = [
    ['a repeated query parameter', '/api/v1/dns/example.com?type=A&type=MX', 'type'],
    ['a repeated required query parameter', '/api/v1/email?address=a%40b.example&address=c%40d.example', 'address'],
    ['broken percent-encoding in a path value', '/api/v1/bic/%E0%A4%A', 'bic'],
    ['broken percent-encoding in a DNS name', '/api/v1/dns/exa%ZZmple.com', 'domain'],
  ] as const;

  it.each(MALFORMED)('%s without a key: 401 UNAUTHORIZED', async (_, path) => {
    const res = await h.call(path, { key: null });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-Api-Key"');
  });

  it.each(MALFORMED)('%s with an unknown key: 403 FORBIDDEN', async (_, path) => {
    const res = await h.call(path, { key: 'vls_unknown_key_0000000000000000' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  it.each(MALFORMED)('%s with a valid key: 400 INVALID_FORMAT naming the field, with the limit headers, counted', async (_, path, field) => {
    const { key } = await h.createKey('item-4');
    const res = await h.call(path, { key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.body.details).toEqual([expect.objectContaining({ field })]);
    expect(res.headers.get('ratelimit-limit')).not.toBeNull();
    expect(res.headers.get('x-quota-daily-remaining')).not.toBeNull();
    const remaining = Number(res.headers.get('ratelimit-remaining'));
    const next = await h.call('/api/v1/bic/DEUTDEFF', { key });
    expect(Number(next.headers.get('ratelimit-remaining'))).toBe(remaining - 1);
    expect(Number(next.headers.get('ratelimit-limit')) - remaining).toBe(1); // the malformed request was the first counted
  });

  it('answers a malformed request like any other refused value (an empty type): same order, same headers', async () => {
    const { key } = await h.createKey('item-4-reference');
    const res = await h.call('/api/v1/dns/example.com?type=', { key });
    expect(res.status).toBe(400);
    expect(res.headers.get('ratelimit-remaining')).not.toBeNull();
    expect((await h.call('/api/v1/dns/example.com?type=', { key: null })).status).toBe(401);
  });
});

describe('item 5: the contract says what the service does', () => {
  it.each([
    ['/api/v1/dns/a.%CC%85.example', 'DnsName'],
    ['/api/v1/dns/%CC%81a.example', 'DnsName'],
    ['/api/v1/ssl/a.%CC%85.example', 'TlsHost'],
  ])('%s: a label starting with a combining mark is refused by the schema itself (its own message)', async (path, parameter) => {
    const document = (await (await h.fetch(`/openapi.json`)).json()) as any;
    const res = await h.call(path);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.body.message).toBe(`parameter domain is malformed: ${document.components.parameters[parameter].schema['x-invalid-message']}`);
  });

  it('a combining mark inside a label is still taken', async () => {
    const res = await h.call('/api/v1/dns/e%CC%81.example');
    expect(res.status).toBe(404); // not in the zone: looked up, not refused
  });

  it("IbanResult.bic names the countries the bank directory covers, and how many have tables of their own", async () => {
    const document = (await (await h.fetch(`/openapi.json`)).json()) as any;
    const text: string = document.components.schemas.IbanResult.properties.bic.description;
    const banks = await loadBankDirectory(projectPath('data/banks'));
    expect([...new Set(text.match(/\b[A-Z]{2}\b/g))].sort()).toEqual([...banks.countries].sort());
    const withTables = new Set(['DE', 'AT', 'BE', 'ES', 'FR', 'LU', 'NL', ...banks.tables.map((t) => t.country)]);
    expect(text).toContain(`${withTables.size} countries have bank-code tables`);
    expect(text).not.toMatch(/through the French table/);
  });
});
