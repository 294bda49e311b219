// DNS lookup and email validation handlers against a real DNS server on 127.0.0.1.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/adapters/dns/resolver.js';
import { type ApiError } from '../../src/errors.js';
import { asApiError } from '../../src/error-answers.js';
import type { DnsResolver } from '../../src/adapters/dns/resolver.js';
import { createMailSecurity } from '../../src/adapters/mail/mail-security.js';
import { createEmailOperations } from '../../src/operations/email.js';
import { createNetworkOperations } from '../../src/operations/network.js';
import type { components } from '../../generated/api.js';
import { loadEmailLists } from '../../src/adapters/mail/email-lists.js';
import { createEmailClassifier } from '../../src/domain/email.js';

type DnsLookupResult = components['schemas']['DnsResult'];
type EmailValidationResult = components['schemas']['EmailValidationResult'];

/** The DNS and email handlers over one resolver (what compose.ts wires). */
function createDnsEmailOperations(deps: {
  resolver: DnsResolver;
  email: ReturnType<typeof createEmailClassifier>;
  fetchMtaStsPolicy: Parameters<typeof createMailSecurity>[1];
  allowSpecialUse?: boolean;
}) {
  const { resolver, email, allowSpecialUse } = deps;
  const mailSecurity = createMailSecurity(resolver, deps.fetchMtaStsPolicy);
  const network = createNetworkOperations({ resolver, mailSecurity, allowSpecialUse, tls: null as never, geo: () => null, security: () => null as never, trustProxy: false });
  return { lookupDns: network.lookupDns, ...createEmailOperations({ resolver, email: () => email, allowSpecialUse }) };
}
import { startDnsServer } from '../support/dns-server.js';
import type { TestDnsServer, Zone } from '../support/dns-server.js';

const SOA = { type: 'SOA' as const, ttl: 3600, data: { mname: 'ns.corp.test', rname: 'hostmaster.corp.test', minimum: 60 } };
const zone: Zone = {
  'corp.test': [
    SOA,
    { type: 'A', data: '192.0.2.10', ttl: 300 },
    { type: 'AAAA', data: '2001:db8::10', ttl: 300 },
    { type: 'CAA', data: { flags: 0, tag: 'issue', value: 'ca.example' }, ttl: 300 },
    { type: 'MX', data: { preference: 10, exchange: 'mx.corp.test' }, ttl: 1800 },
    { type: 'NS', data: 'ns.corp.test', ttl: 86400 },
    { type: 'TXT', data: 'v=spf1 include:_spf.provider.test ip4:192.0.2.0/24 -all', ttl: 600 },
    { type: 'TXT', data: 'site-verification=abc', ttl: 600 },
  ],
  'www.corp.test': [{ type: 'CNAME', data: 'corp.test', ttl: 120 }],
  '_dmarc.corp.test': [{ type: 'TXT', data: 'v=DMARC1; p=reject; sp=quarantine; rua=mailto:dmarc@corp.test!10m' }],
  'google._domainkey.corp.test': [{ type: 'TXT', data: 'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC' }],
  '_spf.provider.test': [{ type: 'TXT', data: 'v=spf1 ip4:198.51.100.0/24 ~all' }],
  'soft.test': [{ type: 'TXT', data: 'v=spf1 mx ~all' }],
  'neutral.test': [{ type: 'TXT', data: 'v=spf1 a ?all' }],
  'open.test': [{ type: 'TXT', data: 'v=spf1 +all' }],
  'bare.test': [{ type: 'TXT', data: 'v=spf1 all' }],
  'noall.test': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.1' }],
  'redirect.test': [{ type: 'TXT', data: 'v=spf1 redirect=_spf.provider.test' }],
  'min.test': [{ type: 'A', data: '192.0.2.20' }],
  '_dmarc.min.test': [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
  'mx-less.test': [{ type: 'A', data: '192.0.2.30' }],
  'nullmx.test': [
    { type: 'MX', data: { preference: 0, exchange: '.' } },
    { type: 'A', data: '192.0.2.40' },
  ],
  'offlist.test': [{ type: 'TXT', data: 'hello' }],
  'custom._domainkey.offlist.test': [{ type: 'TXT', data: 'v=DKIM1; p=abc' }],
  'xn--mnchen-3ya.test': [{ type: 'A', data: '192.0.2.50' }],
};

let server: TestDnsServer;
let silent: TestDnsServer;
const email = createEmailClassifier(await loadEmailLists());
/** No zone here publishes an MTA-STS record, so no policy is ever fetched (test/unit/mail-security.test.ts fetches real ones). */
const fetchMtaStsPolicy = async () => ({ ok: false as const, reason: 'no policy server in this test' });
const ops = () =>
  createDnsEmailOperations({ resolver: createDnsResolver({ servers: [{ host: '127.0.0.1', port: server.port }], timeoutMs: 5000 }), email, fetchMtaStsPolicy });

beforeAll(async () => {
  server = await startDnsServer(zone);
  silent = await startDnsServer(zone, { mode: 'silent' });
});
afterAll(async () => {
  await Promise.all([server.close(), silent.close()]);
});
afterEach(() => {
  server.queries.length = 0;
});

/** openapi-backend's context as a handler gets it. */
const req = (params: Record<string, string>, query: Record<string, string | undefined> = {}): any => ({
  request: { params, query, requestBody: undefined, headers: {}, ip: '127.0.0.1' },
});
const lookup = async (domain: string, type?: string): Promise<DnsLookupResult> =>
  (await ops().lookupDns(req({ domain }, { type }))).body as DnsLookupResult;
const validate = async (address: string): Promise<EmailValidationResult> =>
  (await ops().validateEmail(req({}, { address }))).body as EmailValidationResult;
const failure = async (p: Promise<unknown> | unknown): Promise<ApiError> => {
  const err = await Promise.resolve(p).then(
    () => null,
    (e: unknown) => e,
  );
  // Handlers throw ApiErrors and pass adapter failures through; both answer as the ApiError asApiError gives.
  const api = asApiError(err);
  expect(api).not.toBeNull();
  return api as ApiError;
};

describe('lookupDns: records', () => {
  it('returns A records by default with TTLs and null priority', async () => {
    const r = await lookup('corp.test');
    expect(r.domain).toBe('corp.test');
    expect(r.records).toEqual([{ type: 'A', name: 'corp.test', value: '192.0.2.10', ttl: 300, priority: null }]);
    expect(Number.isInteger(r.queryTimeMs) && r.queryTimeMs >= 0).toBe(true);
  });

  it('returns several types in the order asked, case-insensitively, ignoring duplicates', async () => {
    const r = await lookup('corp.test', 'mx, ns,Mx,aaaa');
    expect(r.records).toEqual([
      { type: 'MX', name: 'corp.test', value: 'mx.corp.test', ttl: 1800, priority: 10 },
      { type: 'NS', name: 'corp.test', value: 'ns.corp.test', ttl: 86400, priority: null },
      { type: 'AAAA', name: 'corp.test', value: '2001:db8::10', ttl: 300, priority: null },
    ]);
  });

  it('returns the SOA as "mname rname serial refresh retry expire minimum"', async () => {
    const r = await lookup('corp.test', 'SOA');
    expect(r.records.map((x) => x.value)).toEqual(['ns.corp.test hostmaster.corp.test 1 3600 600 86400 60']);
  });

  it('returns TXT records and a CNAME', async () => {
    expect((await lookup('corp.test', 'TXT')).records.map((x) => x.value)).toEqual([
      'v=spf1 include:_spf.provider.test ip4:192.0.2.0/24 -all',
      'site-verification=abc',
    ]);
    expect((await lookup('www.corp.test', 'CNAME')).records).toEqual([
      { type: 'CNAME', name: 'www.corp.test', value: 'corp.test', ttl: 120, priority: null },
    ]);
  });

  it('answers 200 with no records when the domain has none of the asked type', async () => {
    expect((await lookup('min.test', 'MX')).records).toEqual([]);
  });

  it('converts an IDN domain to A-labels', async () => {
    const r = await lookup('MÜNCHEN.test');
    expect(r.domain).toBe('xn--mnchen-3ya.test');
    expect(r.records.map((x) => x.value)).toEqual(['192.0.2.50']);
  });

  it('accepts a trailing dot', async () => {
    expect((await lookup('corp.test.')).domain).toBe('corp.test');
  });
});

describe('lookupDns: errors', () => {
  it('answers 404 for a domain that does not exist', async () => {
    const err = await failure(lookup('nope.test'));
    expect(err).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND', message: 'domain does not exist' });
  });

  it.each(['XYZ', 'A,XYZ', 'mx,ptr', 'ANY'])('rejects type=%s naming the bad value', async (type) => {
    const err = await failure(lookup('corp.test', type));
    const bad = type.split(',').pop() as string;
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT' });
    expect(err.message).toContain(`'${bad}'`);
    expect(server.queries).toHaveLength(0);
  });

  it.each([
    '-corp.test',
    'corp-.test',
    'co rp.test',
    'corp..test',
    '.corp.test',
    'corp.test/x',
    'corp.test?x',
    'corp.test#x',
    'corp.test?',
    'user@corp.test',
    '192.0.2.1',
    '[2001:db8::1]',
    `${'a'.repeat(64)}.test`,
    `${Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.')}.test`,
  ])('rejects the domain %j with 400 INVALID_FORMAT', async (domain) => {
    const err = await failure(lookup(domain));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT' });
    expect(server.queries).toHaveLength(0);
  });

  it('answers 502 when the DNS server never answers', async () => {
    const o = createDnsEmailOperations({
      resolver: createDnsResolver({ servers: [{ host: '127.0.0.1', port: silent.port }], timeoutMs: 150 }),
      fetchMtaStsPolicy,
      email,
    });
    const err = await failure(o.lookupDns(req({ domain: 'corp.test' }, {})));
    expect(err).toMatchObject({ status: 502, code: 'UPSTREAM_UNAVAILABLE', message: 'DNS lookup failed' });
  });
});

describe('lookupDns: security', () => {
  it('answers type=CAA with the name\'s own records in presentation form, and analyses them', async () => {
    const r = await lookup('corp.test', 'caa');
    expect(r.records).toEqual([{ type: 'CAA', name: 'corp.test', value: '0 issue "ca.example"', ttl: 300, priority: null }]);
    expect(r.security.caa).toMatchObject({ present: true, recordName: 'corp.test', issuers: ['ca.example'] });
  });

  it('fills SPF, DKIM and DMARC whatever types were asked', async () => {
    const r = await lookup('corp.test', 'NS');
    expect(r.security).toMatchObject({
      spf: {
        present: true,
        rawRecord: 'v=spf1 include:_spf.provider.test ip4:192.0.2.0/24 -all',
        qualifier: '-all',
        mechanisms: ['include:_spf.provider.test', 'ip4:192.0.2.0/24'],
        dnsLookups: 1,
        warnings: [],
      },
      dkimFound: true,
      dmarc: {
        present: true,
        rawRecord: 'v=DMARC1; p=reject; sp=quarantine; rua=mailto:dmarc@corp.test!10m',
        policy: 'reject',
        subdomainPolicy: 'quarantine',
        reportingEmail: 'dmarc@corp.test',
        warnings: [],
        recordName: '_dmarc.corp.test',
        organisationalDomain: 'corp.test',
      },
    });
    expect(Object.keys(r.security).sort()).toEqual(['bimi', 'caa', 'dkimFound', 'dmarc', 'dnssec', 'mtaSts', 'spf', 'tlsRpt']);
  });

  it.each([
    ['soft.test', '~all'],
    ['neutral.test', '?all'],
    ['open.test', '+all'],
    ['bare.test', '+all'],
    ['noall.test', '?all'],
    ['redirect.test', '~all'],
  ])('%s has the SPF qualifier %s', async (domain, qualifier) => {
    expect((await lookup(domain)).security.spf.qualifier).toBe(qualifier);
  });

  it('lists a redirect among the mechanisms', async () => {
    expect((await lookup('redirect.test')).security.spf.mechanisms).toEqual(['redirect=_spf.provider.test']);
  });

  it('reports DMARC without sp and rua, with warnings', async () => {
    const { dmarc } = (await lookup('min.test')).security;
    expect(dmarc).toMatchObject({ present: true, policy: 'none', subdomainPolicy: '', reportingEmail: '' });
    expect(dmarc.warnings).toHaveLength(2);
  });

  it('reports missing SPF, DKIM and DMARC', async () => {
    const { security } = await lookup('mx-less.test');
    expect(security.spf).toMatchObject({ present: false, rawRecord: '', qualifier: '', mechanisms: [] });
    expect(security.dkimFound).toBe(false);
    expect(security.dmarc).toMatchObject({ present: false, policy: '' });
  });

  it('finds no DKIM key at a selector outside the list', async () => {
    expect((await lookup('offlist.test')).security.dkimFound).toBe(false);
  });

  it('queries every listed DKIM selector', async () => {
    await lookup('mx-less.test');
    expect(server.queries.filter((q) => q.name.endsWith('._domainkey.mx-less.test'))).toHaveLength(24);
  });
});

describe('validateEmail', () => {
  it('validates a deliverable address at a domain with MX and A', async () => {
    expect(await validate(' Jane.Doe@CORP.test ')).toEqual({
      email: 'Jane.Doe@corp.test',
      user: 'Jane.Doe',
      domain: 'corp.test',
      validFormat: true,
      mxRecord: true,
      aRecord: true,
      roleAddress: false,
      disposableEmail: false,
      freeEmailProvider: false,
      didYouMean: null,
      deliverability: { status: 'not_checked', reason: 'not_requested', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null },
    });
  });

  it('reports an MX-less domain with an A record', async () => {
    expect(await validate('jane@mx-less.test')).toMatchObject({ mxRecord: false, aRecord: true });
  });

  it('treats a null MX as no MX', async () => {
    expect(await validate('jane@nullmx.test')).toMatchObject({ mxRecord: false, aRecord: true });
  });

  it('reports false/false for a domain that does not exist', async () => {
    expect(await validate('jane@nope.test')).toMatchObject({ validFormat: true, mxRecord: false, aRecord: false });
  });

  it('answers 200 with validFormat false and makes no DNS query for a malformed address', async () => {
    expect(await validate('jane..doe@corp.test')).toMatchObject({ validFormat: false, mxRecord: false, aRecord: false });
    expect(server.queries).toHaveLength(0);
  });

  it('flags role, free and disposable addresses', async () => {
    expect(await validate('admin+x@gmail.com')).toMatchObject({ roleAddress: true, freeEmailProvider: true, disposableEmail: false });
    expect(await validate('bob@mailinator.com')).toMatchObject({ disposableEmail: true, freeEmailProvider: false });
  });

  it('suggests a correction for a typo', async () => {
    expect((await validate('bob@hotmial.com')).didYouMean).toBe('bob@hotmail.com');
  });

  it('converts an IDN domain', async () => {
    expect(await validate('jane@münchen.test')).toMatchObject({ domain: 'xn--mnchen-3ya.test', aRecord: true });
  });

  it('answers 502 when the DNS server never answers', async () => {
    const o = createDnsEmailOperations({
      resolver: createDnsResolver({ servers: [{ host: '127.0.0.1', port: silent.port }], timeoutMs: 150 }),
      fetchMtaStsPolicy,
      email,
    });
    const err = await failure(o.validateEmail(req({}, { address: 'jane@corp.test' })));
    expect(err).toMatchObject({ status: 502, code: 'UPSTREAM_UNAVAILABLE' });
  });
});
