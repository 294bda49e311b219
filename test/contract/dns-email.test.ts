// GET /api/v1/dns/{domain} and GET /api/v1/email end to end, against a real DNS server on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';

const zone: Zone = {
  'mail.test': [
    { type: 'SOA', data: { mname: 'ns1.mail.test', rname: 'hostmaster.mail.test', serial: 7, minimum: 60 } },
    { type: 'A', data: '192.0.2.10', ttl: 120 },
    { type: 'AAAA', data: '2001:db8::10', ttl: 120 },
    { type: 'MX', data: { preference: 10, exchange: 'mx1.mail.test' }, ttl: 3600 },
    { type: 'NS', data: 'ns1.mail.test', ttl: 86400 },
    { type: 'TXT', data: 'v=spf1 include:_spf.mail.test ip4:192.0.2.0/24 ~all', ttl: 300 },
  ],
  '_spf.mail.test': [{ type: 'TXT', data: 'v=spf1 ip4:198.51.100.0/24 -all' }],
  '_dmarc.mail.test': [{ type: 'TXT', data: 'v=DMARC1; p=quarantine; sp=reject; rua=mailto:agg@mail.test' }],
  'selector1._domainkey.mail.test': [{ type: 'TXT', data: 'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC' }],
  'alias.mail.test': [{ type: 'CNAME', data: 'mail.test' }],
  'a-only.test': [{ type: 'A', data: '192.0.2.20' }],
  'nullmx.test': [
    { type: 'MX', data: { preference: 0, exchange: '.' } },
    { type: 'A', data: '192.0.2.30' },
  ],
  'xn--bcher-kva.test': [{ type: 'A', data: '192.0.2.40' }],
  'fresh.test': [{ type: 'A', data: '192.0.2.50' }],
  '_dmarc.fresh.test': [{ type: 'TXT', data: 'v=DMARC1; p=none', ttl: 0 }],
  'empty.test': [{ type: 'SOA', data: { mname: 'ns1.empty.test', rname: 'h.empty.test', minimum: 30 } }],
  // Internal names a resolver inside a private network would answer.
  localhost: [{ type: 'A', data: '127.0.0.1' }],
  'printer.local': [{ type: 'A', data: '10.0.0.5' }, { type: 'MX', data: { preference: 10, exchange: 'printer.local' } }],
  'router.home.arpa': [{ type: 'A', data: '192.168.1.1' }],
  'db.internal': [{ type: 'A', data: '10.0.0.6' }],
  intranet: [{ type: 'A', data: '10.0.0.7' }],
};

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let silent: Awaited<ReturnType<typeof startDnsServer>>;
let h: Harness;
let down: Harness;
let allowing: Harness;
beforeAll(async () => {
  dns = await startDnsServer(zone);
  silent = await startDnsServer(zone, { mode: 'silent' });
  h = await startHarness({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '10000' });
  down = await startHarness({ DNS_SERVERS: `127.0.0.1:${silent.port}`, DNS_TIMEOUT_MS: '300' });
  allowing = await startHarness({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '10000', ALLOW_PRIVATE_TARGETS: 'true' });
});
afterAll(async () => {
  await h.close();
  await down.close();
  await allowing.close();
  await dns.close();
  await silent.close();
});

describe('GET /api/v1/dns/{domain}', () => {
  it('answers A by default, with real TTLs and null priority', async () => {
    const res = await h.call('/api/v1/dns/mail.test');
    expect(res.status).toBe(200);
    expect(res.body.records).toEqual([{ type: 'A', name: 'mail.test', value: '192.0.2.10', ttl: 120, priority: null }]);
  });

  it('answers several case-insensitive types, duplicates ignored', async () => {
    const res = await h.call('/api/v1/dns/mail.test?type=mx,Txt,MX,soa,ns,aaaa');
    expect(res.status).toBe(200);
    const byType = Object.fromEntries(res.body.records.map((r: any) => [r.type, r]));
    expect(Object.keys(byType).sort()).toEqual(['AAAA', 'MX', 'NS', 'SOA', 'TXT']);
    expect(byType.MX).toMatchObject({ value: 'mx1.mail.test', priority: 10, ttl: 3600 });
    expect(byType.SOA.value).toMatch(/^ns1\.mail\.test hostmaster\.mail\.test 7 \d+ \d+ \d+ 60$/);
    expect(res.body.records.filter((r: any) => r.type === 'MX')).toHaveLength(1);
  });

  it('analyses SPF, DKIM and DMARC whatever types were asked', async () => {
    const res = await h.call('/api/v1/dns/mail.test?type=NS');
    expect(res.body.security.spf).toMatchObject({
      present: true,
      qualifier: '~all',
      mechanisms: ['include:_spf.mail.test', 'ip4:192.0.2.0/24'],
    });
    expect(res.body.security.dkimFound).toBe(true);
    expect(res.body.security.dmarc).toMatchObject({
      present: true,
      policy: 'quarantine',
      subdomainPolicy: 'reject',
      reportingEmail: 'agg@mail.test',
    });
  });

  it('answers CNAME records when asked', async () => {
    const res = await h.call('/api/v1/dns/alias.mail.test?type=CNAME');
    expect(res.body.records).toEqual([expect.objectContaining({ type: 'CNAME', value: 'mail.test' })]);
  });

  it('answers 200 with no records for an existing name without the type', async () => {
    const res = await h.call('/api/v1/dns/empty.test?type=MX');
    expect(res.status).toBe(200);
    expect(res.body.records).toEqual([]);
    expect(res.body.security.spf.present).toBe(false);
    expect(res.body.security.dmarc.present).toBe(false);
  });

  it('converts an IDN to A-labels', async () => {
    const res = await h.call(`/api/v1/dns/${encodeURIComponent('bücher.test')}`);
    expect(res.status).toBe(200);
    expect(res.body.domain).toBe('xn--bcher-kva.test');
    expect(res.body.records[0].value).toBe('192.0.2.40');
  });

  // `localhost` is a well-formed DNS name too, but a special-use one: refused by policy (see 'special-use and internal names').
  it.each(['xn--wgv71a119e.test', '_dmarc.nope.test'])('takes %s as a DNS name (404 when it does not exist, never 400)', async (name) => {
    const res = await h.call(`/api/v1/dns/${name}`);
    expect(res.status).toBe(404);
  });

  it('answers 404 for a domain that does not exist', async () => {
    const res = await h.call('/api/v1/dns/nope.test');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'RESOURCE_NOT_FOUND', message: 'domain does not exist' });
  });

  it.each([
    ['an unsupported type, listing the supported ones', '/api/v1/dns/mail.test?type=A,PTR', /A, AAAA, MX, TXT, CNAME, NS, SOA/],
    ['a malformed domain', '/api/v1/dns/exa%20mple.com', /domain/],
    ['a label over 63 characters', `/api/v1/dns/${'a'.repeat(64)}.test`, /domain/],
    ['a name read as an IPv4 address (000 is 0.0.0.0)', '/api/v1/dns/000', /not ending in a number/],
    ['an old numeric IPv4 form', '/api/v1/dns/0x7f.1', /not ending in a number/],
    ['a last label in hex', '/api/v1/dns/example.0x1f', /not ending in a number/],
    ['a blank domain', '/api/v1/dns/%0D', /domain/],
    ['an xn-- label that is no valid A-label (UTS #46, on every Node)', '/api/v1/dns/xn--zz.test', /not a valid A-label/],
    ['an empty type', '/api/v1/dns/mail.test?type=', /type/],
    ['an empty element in the type list', '/api/v1/dns/mail.test?type=A,,MX', /type/],
  ])('answers 400 INVALID_FORMAT for %s', async (_label, path, message) => {
    const res = await h.call(path);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.body.message).toMatch(message);
  });

  it('serves a repeated question from cache without asking upstream again', async () => {
    await h.call('/api/v1/dns/a-only.test');
    const before = dns.queries.length;
    const res = await h.call('/api/v1/dns/a-only.test');
    expect(res.status).toBe(200);
    expect(dns.queries.length).toBe(before);
  });

  it('reuses the mail-security analysis while its answers are cached: one cache read on a repeat, not ~30', async () => {
    const hits = async () => Number(/cache_hits_total\{cache="dns"\} (\d+)/.exec(await (await h.fetch('/metrics')).text())?.[1] ?? 0);
    await h.call('/api/v1/dns/mail.test?type=A');
    await h.call('/api/v1/dns/mail.test?type=A');
    const before = await hits();
    const queries = dns.queries.length;
    const res = await h.call('/api/v1/dns/mail.test?type=A');
    expect(res.body.security.dmarc.policy).toBe('quarantine');
    expect((await hits()) - before).toBe(1); // the A record only
    expect(dns.queries.length).toBe(queries);
  });

  it('rebuilds the analysis when an answer it used may not be cached (TTL 0)', async () => {
    expect((await h.call('/api/v1/dns/fresh.test')).body.security.dmarc.policy).toBe('none');
    dns.set('_dmarc.fresh.test', [{ type: 'TXT', data: 'v=DMARC1; p=reject', ttl: 0 }]);
    expect((await h.call('/api/v1/dns/fresh.test')).body.security.dmarc.policy).toBe('reject');
  });

  it('exposes the DNS cache in /metrics', async () => {
    const text = await (await h.fetch('/metrics')).text();
    expect(Number(/cache_hits_total\{cache="dns"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
    expect(Number(/cache_entries\{cache="dns"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
  });

  it('answers 502 UPSTREAM_UNAVAILABLE when the DNS server never answers', async () => {
    const res = await down.call('/api/v1/dns/mail.test');
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(res.text).not.toMatch(/127\.0\.0\.1|ETIMEDOUT|dgram/);
  });
});

describe('GET /api/v1/email', () => {
  it('validates a role address on a domain with MX', async () => {
    const res = await h.call('/api/v1/email?address=%20Info@Mail.TEST%20');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      email: 'Info@mail.test',
      user: 'Info',
      domain: 'mail.test',
      validFormat: true,
      mxRecord: true,
      aRecord: true,
      roleAddress: true,
      disposableEmail: false,
      freeEmailProvider: false,
      didYouMean: null,
      deliverability: { status: 'not_checked', reason: 'not_requested', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null },
    });
  });

  it.each([
    ['%2B as a plus sign', 'jane%2Bnews@mail.test', 'jane+news@mail.test', true],
    ['+ as a space (form encoding)', 'jane+news@mail.test', 'jane news@mail.test', false],
  ])('reads %s in the query, as documented', async (_, query, email, validFormat) => {
    const res = await h.call(`/api/v1/email?address=${query}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email, validFormat });
  });

  it('counts a null MX as no MX and falls back to A', async () => {
    const res = await h.call('/api/v1/email?address=jane@nullmx.test');
    expect(res.body).toMatchObject({ mxRecord: false, aRecord: true });
  });

  it('answers false/false for a domain that does not exist', async () => {
    const res = await h.call('/api/v1/email?address=jane@nope.test');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ validFormat: true, mxRecord: false, aRecord: false });
  });

  it('answers a malformed address with validFormat false and no DNS query', async () => {
    const before = dns.queries.length;
    const res = await h.call('/api/v1/email?address=not-an-address');
    expect(res.status).toBe(200);
    expect(res.body.validFormat).toBe(false);
    expect(dns.queries.length).toBe(before);
  });

  it('flags disposable, free and typo domains', async () => {
    const free = await h.call('/api/v1/email?address=jane@gmail.com');
    expect(free.body.freeEmailProvider).toBe(true);
    expect(free.body.disposableEmail).toBe(false);
    const disposable = await h.call('/api/v1/email?address=jane@mailinator.com');
    expect(disposable.body.disposableEmail).toBe(true);
    const typo = await h.call('/api/v1/email?address=jane@gmial.com');
    expect(typo.body.didYouMean).toBe('jane@gmail.com');
  });

  it('answers 400 INVALID_FORMAT over 320 characters', async () => {
    const res = await h.call(`/api/v1/email?address=${'a'.repeat(320)}@x.de`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
  });

  it('counts 320 characters in code points, as the schema does: 320 emoji are a verdict, not a 400', async () => {
    const res = await h.call(`/api/v1/email?address=${encodeURIComponent('\u{1F600}'.repeat(320))}`);
    expect(res.status).toBe(200);
    expect(res.body.validFormat).toBe(false);
  });

  it('answers 400 INVALID_FORMAT for an empty address, MISSING_PARAMETER for an absent one', async () => {
    const empty = await h.call('/api/v1/email?address=');
    expect(empty.body).toMatchObject({ status: 400, code: 'INVALID_FORMAT', details: [{ field: 'address' }] });
    const absent = await h.call('/api/v1/email');
    expect(absent.body).toMatchObject({ status: 400, code: 'MISSING_PARAMETER', details: [{ field: 'address' }] });
  });

  it('answers 502 when the DNS servers fail', async () => {
    const res = await down.call('/api/v1/email?address=jane@mail.test');
    expect(res.status).toBe(502);
  });
});

describe('special-use and internal names', () => {
  it.each(['localhost', 'x.localhost', 'printer.local', 'router.home.arpa', 'db.internal', 'intranet', 'nothing.invalid', 'abc.onion', 'Printer.Local.'])(
    '/dns/%s → 400 VALIDATION_ERROR, nothing sent to the resolver',
    async (name) => {
      const before = dns.queries.length;
      const res = await h.call(`/api/v1/dns/${name}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'domain' }] });
      expect(res.body.details[0].message).toMatch(/single-label|RFC|ICANN/);
      expect(dns.queries.length).toBe(before);
    },
  );

  it('still looks up the names RFC 6761 keeps ordinary (.test, .example)', async () => {
    expect((await h.call('/api/v1/dns/mail.test')).status).toBe(200);
    expect((await h.call('/api/v1/dns/www.example')).status).not.toBe(400);
  });

  it('an email address at a special-use domain is well-formed but never looked up', async () => {
    const before = dns.queries.length;
    const res = await h.call('/api/v1/email?address=jane@printer.local');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ validFormat: true, mxRecord: false, aRecord: false });
    expect(dns.queries.length).toBe(before);
  });

  it('with ALLOW_PRIVATE_TARGETS=true they go to the resolver (test set-ups)', async () => {
    const res = await allowing.call('/api/v1/dns/router.home.arpa');
    expect(res.status).toBe(200);
    expect(res.body.records).toEqual([{ type: 'A', name: 'router.home.arpa', value: '192.168.1.1', ttl: expect.any(Number), priority: null }]);
    expect((await allowing.call('/api/v1/email?address=jane@printer.local')).body).toMatchObject({ mxRecord: true, aRecord: true });
  });
});

describe('email format problems and card numbers', () => {
  it('an invisible character: validFormat false with the reason, and no DNS query', async () => {
    const before = dns.queries.length;
    const res = await h.call('/api/v1/email?address=jane%E2%80%8B@mail.test');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ validFormat: false, formatProblem: 'contains an invisible or control character (U+200B)' });
    expect(dns.queries.length).toBe(before);
  });

  it('a card number sent as the address is masked in every field', async () => {
    const res = await h.call('/api/v1/email?address=4539578763621486');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email: '************1486', user: '************1486', validFormat: false });
    expect(res.text).not.toContain('4539578763621486');
  });
});
