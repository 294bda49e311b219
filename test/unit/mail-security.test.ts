// Mail-security analysis against a real DNS server and a real HTTPS policy server on loopback (RFC 7489, 8461, 8460, 8659, BIMI).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver, type DnsResolver } from '../../src/adapters/dns/resolver.js';
import { createMtaStsFetcher } from '../../src/adapters/mail/mta-sts-fetch.js';
import { addressResolver } from '../../src/adapters/tls/target-guard.js';
import { analyseCaaRecords, caaClimb, parseCaaRecord } from '../../src/domain/caa.js';
import { mailtoDomains, organisationalDomain } from '../../src/domain/dmarc.js';
import { analyseMailSecurity, type MailSecurityExtras } from '../../src/domain/mail-security.js';
import { analyseMtaSts, mxMatches, parseMtaStsPolicy } from '../../src/domain/mta-sts.js';
import { parseTlsRpt } from '../../src/domain/tls-rpt.js';
import { analyseBimiRecords } from '../../src/domain/bimi.js';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { createTestPki, startHttpsServer, type RunningServer } from '../support/tls-fixtures.js';

const POLICIES: Record<string, string> = {
  'mta-sts.good.test': 'version: STSv1\r\nmode: enforce\r\nmx: *.good.test\r\nmax_age: 1209600\r\n',
  'mta-sts.partial.test': 'version: STSv1\nmode: enforce\nmx: mx1.partial.test\nmax_age: 604800\n',
  'mta-sts.testing.test': 'version: STSv1\nmode: testing\nmx: mx.testing.test\nmax_age: 3600\n',
  'mta-sts.broken.test': 'version: STSv1\nmode: strict\nmax_age: 99999999999\n',
  'mta-sts.big.test': `version: STSv1\nmode: enforce\nmx: mx.big.test\nmax_age: 604800\n# ${'x'.repeat(70_000)}\n`,
};

const mtaHosts = ['good', 'partial', 'testing', 'broken', 'big', 'redirect', 'html', 'private'].map((d) => `mta-sts.${d}.test`);
const zone: Zone = {
  'good.test': [
    { type: 'MX', data: { preference: 10, exchange: 'mx1.good.test' } },
    { type: 'MX', data: { preference: 20, exchange: 'mx2.good.test' } },
    { type: 'TXT', data: 'v=spf1 -all' },
    { type: 'CAA', data: { tag: 'issue', value: 'ca.example; account=1' } },
    { type: 'CAA', data: { tag: 'iodef', value: 'mailto:security@good.test' } },
  ],
  '_mta-sts.good.test': [{ type: 'TXT', data: 'v=STSv1; id=20260101T000000;' }],
  '_smtp._tls.good.test': [{ type: 'TXT', data: 'v=TLSRPTv1; rua=mailto:tlsrpt@good.test,https://report.good.test/v1' }],
  '_dmarc.good.test': [{ type: 'TXT', data: 'v=DMARC1; p=reject; rua=mailto:dmarc@good.test' }],
  'default._bimi.good.test': [{ type: 'TXT', data: 'v=BIMI1; l=https://good.test/logo.svg; a=https://good.test/vmc.pem' }],
  'partial.test': [
    { type: 'MX', data: { preference: 10, exchange: 'mx1.partial.test' } },
    { type: 'MX', data: { preference: 20, exchange: 'backup.elsewhere.test' } },
  ],
  '_mta-sts.partial.test': [{ type: 'TXT', data: 'v=STSv1; id=1' }],
  'testing.test': [{ type: 'MX', data: { preference: 10, exchange: 'mx.testing.test' } }],
  '_mta-sts.testing.test': [{ type: 'TXT', data: 'v=STSv1; id=2' }],
  '_smtp._tls.testing.test': [{ type: 'TXT', data: 'v=TLSRPTv1; rua=ftp://x.test' }],
  '_mta-sts.broken.test': [{ type: 'TXT', data: 'v=STSv1; id=3' }],
  '_mta-sts.big.test': [{ type: 'TXT', data: 'v=STSv1; id=4' }],
  '_mta-sts.redirect.test': [{ type: 'TXT', data: 'v=STSv1; id=5' }],
  '_mta-sts.html.test': [{ type: 'TXT', data: 'v=STSv1; id=6' }],
  '_mta-sts.private.test': [{ type: 'TXT', data: 'v=STSv1; id=7' }],
  '_mta-sts.nohost.test': [{ type: 'TXT', data: 'v=STSv1; id=8' }],
  '_mta-sts.badcert.test': [{ type: 'TXT', data: 'v=STSv1; id=9' }],
  'mta-sts.badcert.test': [{ type: 'A', data: '127.0.0.1' }],
  ...Object.fromEntries(mtaHosts.map((h) => [h, [{ type: 'A' as const, data: '127.0.0.1' }]])),
  // DMARC: a subdomain without a record of its own inherits its organisational domain's.
  'org.test': [{ type: 'A', data: '192.0.2.1' }],
  '_dmarc.org.test': [{ type: 'TXT', data: 'v=DMARC1; p=reject; sp=quarantine; rua=mailto:agg@org.test' }],
  'mail.sub.org.test': [{ type: 'A', data: '192.0.2.2' }],
  // External report destinations: one authorised (RFC 7489 §7.1), one not.
  '_dmarc.ext.test': [{ type: 'TXT', data: 'v=DMARC1; p=none; rua=mailto:a@reports.test,mailto:b@authorised.test; ruf=mailto:c@sub.ext.test' }],
  '_dmarc.many.test': [{ type: 'TXT', data: `v=DMARC1; p=reject; rua=${Array.from({ length: 12 }, (_, i) => `mailto:r@d${i}.test`).join(',')}` }],
  'ext.test._report._dmarc.authorised.test': [{ type: 'TXT', data: 'v=DMARC1' }],
  'default._bimi.ext.test': [{ type: 'TXT', data: 'v=BIMI1; l=http://ext.test/logo.svg' }],
  // CAA: the parent's set applies to a name without its own; a critical unknown property.
  'caa.test': [
    { type: 'CAA', data: { tag: 'issue', value: 'ca.example' } },
    { type: 'CAA', data: { tag: 'issuewild', value: ';' } },
  ],
  'www.caa.test': [{ type: 'A', data: '192.0.2.3' }],
  'critical.test': [{ type: 'CAA', data: { flags: 128, tag: 'tbs', value: 'x' } }, { type: 'CAA', data: { tag: 'issue', value: 'ca.example' } }],
  'signed.test': [{ type: 'TXT', data: 'v=spf1 -all' }],
};

const pki = createTestPki('Policy');
const leaf = pki.leaf({ subject: [['CN', 'mta-sts.good.test']], dnsNames: mtaHosts });

let dns: TestDnsServer;
let https: RunningServer;
let resolver: DnsResolver;

function fetcher(extra: { allowPrivate?: boolean; maxBytes?: number } = {}) {
  return createMtaStsFetcher({ resolve: addressResolver(resolver), port: https.port, timeoutMs: 2000, extraCaPem: pki.root.certPem, allowPrivate: true, ...extra });
}

function analyse(domain: string, fetch = fetcher(), dnsResolver = resolver): Promise<MailSecurityExtras> {
  return analyseMailSecurity(
    { txt: (n) => dnsResolver.query(n, 'TXT').then((a) => a.records.map((r) => r.value)), query: (n, t) => dnsResolver.query(n, t), fetchMtaStsPolicy: fetch },
    domain,
  );
}

beforeAll(async () => {
  dns = await startDnsServer(zone, { authenticated: ['signed.test'] });
  resolver = createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 5000 });
  https = await startHttpsServer({
    cert: leaf.chainPem,
    key: leaf.keyPem,
    handler: (req, res) => {
      const host = String(req.headers.host).split(':')[0];
      if (req.url !== '/.well-known/mta-sts.txt') return void res.writeHead(404).end();
      if (host === 'mta-sts.redirect.test') return void res.writeHead(301, { location: 'https://elsewhere.test/' }).end();
      if (host === 'mta-sts.html.test') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
      const body = POLICIES[host];
      if (!body) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
    },
  });
});
afterAll(async () => {
  await https.close();
  await dns.close();
});

describe('a domain with every mechanism in order', () => {
  let r: MailSecurityExtras;
  beforeAll(async () => {
    r = await analyse('good.test');
  });

  it('MTA-STS: record and fetched policy, MX hosts covered by *.good.test, no warnings', () => {
    expect(r.mtaSts).toEqual({
      present: true,
      rawRecord: 'v=STSv1; id=20260101T000000;',
      id: '20260101T000000',
      policyFound: true,
      mode: 'enforce',
      mx: ['*.good.test'],
      maxAge: 1209600,
      warnings: [],
    });
  });

  it('TLS-RPT: both rua destinations', () => {
    expect(r.tlsRpt).toMatchObject({ present: true, rua: ['mailto:tlsrpt@good.test', 'https://report.good.test/v1'], warnings: [] });
  });

  it('BIMI: logo and evidence under a DMARC policy at enforcement', () => {
    expect(r.bimi).toEqual({
      present: true,
      rawRecord: 'v=BIMI1; l=https://good.test/logo.svg; a=https://good.test/vmc.pem',
      logoUrl: 'https://good.test/logo.svg',
      authorityUrl: 'https://good.test/vmc.pem',
      warnings: [],
    });
  });

  it('CAA: the issuer without its parameters, iodef, wildcard issuers following issue', () => {
    expect(r.caa).toMatchObject({ present: true, recordName: 'good.test', issuers: ['ca.example'], wildcardIssuers: ['ca.example'], iodef: ['mailto:security@good.test'], warnings: [] });
    expect(r.caa.records).toContain('0 issue "ca.example; account=1"');
  });

  it('DMARC from the name itself; DNSSEC not authenticated by this resolver', () => {
    expect(r.dmarc).toMatchObject({ present: true, policy: 'reject', recordName: '_dmarc.good.test', organisationalDomain: 'good.test', warnings: [] });
    expect(r.dnssec).toEqual({ authenticated: false });
  });
});

describe('MTA-STS warnings', () => {
  it.each([
    ['partial.test', /^MX host backup\.elsewhere\.test not covered by the policy's mx patterns/],
    ['testing.test', /^policy mode is testing/],
    ['broken.test', /^the policy mode "strict" is not enforce, testing or none: senders ignore it$/],
    ['redirect.test', /could not be fetched: mta-sts\.redirect\.test answered a redirect, which senders do not follow/],
    ['html.test', /could not be fetched: mta-sts\.html\.test served the policy as text\/html, not text\/plain/],
    ['nohost.test', /could not be fetched: no such domain: mta-sts\.nohost\.test: senders apply none$/],
    ['badcert.test', /could not be fetched: mta-sts\.badcert\.test presented a certificate that is not valid for it/],
  ])('%s', async (domain, warning) => {
    const r = await analyse(domain);
    expect(r.mtaSts.present).toBe(true);
    expect(r.mtaSts.warnings.some((w) => warning.test(w)), r.mtaSts.warnings.join(' | ')).toBe(true);
  });

  it('a testing policy with a short max_age warns of both; TLS-RPT with a bad destination warns', async () => {
    const r = await analyse('testing.test');
    expect(r.mtaSts).toMatchObject({ policyFound: true, mode: 'testing', maxAge: 3600 });
    expect(r.mtaSts.warnings).toContain('policy max_age=3600 is under a day: senders forget the policy between deliveries');
    expect(r.tlsRpt.warnings).toEqual(["rua destination 'ftp://x.test' is neither a mailto: address nor an https: URL"]);
  });

  it('a policy over the size cap is refused', async () => {
    const r = await analyse('big.test', fetcher({ maxBytes: 65_536 }));
    expect(r.mtaSts.policyFound).toBe(false);
    expect(r.mtaSts.warnings[0]).toMatch(/the policy at mta-sts\.big\.test is larger than 65536 bytes/);
  });

  it('the policy host is not fetched when it resolves to a non-public address (the TLS inspection guard)', async () => {
    const before = https.connections();
    const r = await analyse('private.test', fetcher({ allowPrivate: false }));
    expect(r.mtaSts.warnings[0]).toMatch(/mta-sts\.private\.test resolves to a non-public address, which is not fetched/);
    expect(https.connections()).toBe(before);
  });

  it('MTA-STS without TLS-RPT is pointed out; no record at all is a warning of its own', async () => {
    expect((await analyse('partial.test')).tlsRpt.warnings).toEqual(['MTA-STS is published without TLS-RPT: failures to deliver over TLS go unreported']);
    expect((await analyse('org.test')).mtaSts).toMatchObject({ present: false, warnings: ['no MTA-STS record at _mta-sts: sending servers may deliver without TLS (RFC 8461)'] });
  });
});

describe('DMARC discovery', () => {
  it('falls back to the organisational domain and says where the record came from', async () => {
    const r = await analyse('mail.sub.org.test');
    expect(r.dmarc).toMatchObject({ present: true, policy: 'reject', subdomainPolicy: 'quarantine', recordName: '_dmarc.org.test', organisationalDomain: 'org.test' });
    expect(r.dmarc.warnings[0]).toBe(
      "no DMARC record at _dmarc.mail.sub.org.test: receivers apply the organisational domain's record at _dmarc.org.test (RFC 7489 §6.6.3), with policy quarantine (its sp=)",
    );
  });

  it('no record at the name nor at the organisational domain', async () => {
    const r = await analyse('www.caa.test');
    expect(r.dmarc).toMatchObject({ present: false, recordName: '', organisationalDomain: 'caa.test' });
    expect(r.dmarc.warnings).toEqual(["no DMARC record at _dmarc.www.caa.test nor at its organisational domain's _dmarc.caa.test: receivers apply no DMARC policy (RFC 7489 §6.6.3)"]);
  });

  it('warns on external report destinations without the RFC 7489 §7.1 authorisation record, only those', async () => {
    const r = await analyse('ext.test');
    const external = r.dmarc.warnings.filter((w) => w.startsWith('report destination'));
    expect(external).toEqual([
      'report destination reports.test is outside ext.test and has no authorisation record at ext.test._report._dmarc.reports.test (RFC 7489 §7.1): receivers send it no reports',
    ]);
  });

  it('checks at most 10 external destinations, so one record cannot cause unbounded lookups', async () => {
    dns.queries.length = 0;
    const r = await analyse('many.test');
    expect(r.dmarc.warnings.filter((w) => w.startsWith('report destination'))).toHaveLength(10);
    expect(dns.queries.filter((q) => q.name.includes('._report._dmarc.'))).toHaveLength(10);
  });

  it('BIMI warns when DMARC is not at enforcement and when the logo is not https', async () => {
    const r = await analyse('ext.test');
    expect(r.bimi.warnings).toEqual([
      'l=http://ext.test/logo.svg is not an https: URL',
      'no a= evidence document (mark certificate): most mailbox providers show no logo without one',
      'DMARC is not at enforcement (p=quarantine or p=reject): BIMI logos are not shown',
    ]);
  });

  it('organisational domains come from the public suffix list', () => {
    expect(organisationalDomain('a.b.example.co.uk')).toBe('example.co.uk');
    expect(organisationalDomain('user.github.io')).toBe('user.github.io');
    expect(organisationalDomain('co.uk')).toBeNull();
    expect(mailtoDomains('mailto:a@X.test!10m, https://y.test, mailto:b@x.test')).toEqual(['x.test']);
  });
});

describe('CAA', () => {
  it('climbs to the parent when the name has no record set, asking all names at once', async () => {
    dns.queries.length = 0;
    const uncached = createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 5000, cacheEntries: 0 });
    const r = await analyse('www.caa.test', fetcher(), uncached);
    expect(r.caa).toMatchObject({ present: true, recordName: 'caa.test', issuers: ['ca.example'], wildcardIssuers: [], warnings: [] });
    expect(dns.queries.filter((q) => q.type === 'CAA').map((q) => q.name).sort()).toEqual(['caa.test', 'test', 'www.caa.test']);
  });

  it('no record set anywhere: any CA may issue', async () => {
    expect((await analyse('org.test')).caa).toMatchObject({ present: false, recordName: '', warnings: ['no CAA record at the name or its parents: any certificate authority may issue for it (RFC 8659)'] });
  });

  it('an unknown critical property forbids issuance', async () => {
    expect((await analyse('critical.test')).caa.warnings).toEqual(["CAA property 'tbs' is unknown and marked critical: CAs must refuse to issue (RFC 8659 §4.1)"]);
  });

  it('is a record type of the lookup, in presentation form', async () => {
    const a = await resolver.query('caa.test', 'CAA');
    expect(a.records.map((r) => r.value)).toEqual(['0 issue "ca.example"', '0 issuewild ";"']);
  });

  it('parses records and climbs names', () => {
    expect(parseCaaRecord('128 issue "a\\"b"')).toEqual({ critical: true, tag: 'issue', value: 'a"b' });
    expect(parseCaaRecord('issue ca')).toBeNull();
    expect(caaClimb('a.b.c.test')).toEqual(['a.b.c.test', 'b.c.test', 'c.test', 'test']);
    expect(analyseCaaRecords('x.test', ['0 iodef "mailto:a@x.test"']).warnings).toEqual(['the CAA records hold no issue or issuewild property: any CA may issue']);
  });
});

describe('DNSSEC', () => {
  it('reports the AD bit a validating resolver sets', async () => {
    expect((await analyse('signed.test')).dnssec).toEqual({ authenticated: true });
    expect((await resolver.query('signed.test', 'TXT')).authenticated).toBe(true);
  });
});

describe('pure parsers', () => {
  it('mx patterns: a wildcard stands for exactly one leftmost label', () => {
    expect(mxMatches('*.example.com', 'mx1.example.com')).toBe(true);
    expect(mxMatches('*.example.com', 'a.b.example.com')).toBe(false);
    expect(mxMatches('*.example.com', 'example.com')).toBe(false);
    expect(mxMatches('MX.example.com', 'mx.example.com.')).toBe(true);
  });

  it('a policy needs version, mode, max_age and mx patterns', () => {
    expect(parseMtaStsPolicy('mode: none\nmax_age: 0\nversion: STSv1').policy).toEqual({ mode: 'none', mx: [], maxAge: 0 });
    expect(parseMtaStsPolicy('mode: enforce\nmax_age: 10').errors).toEqual(['the policy has no "version: STSv1" line', 'the policy lists no mx patterns']);
  });

  it('a record without id, and several records', () => {
    expect(analyseMtaSts(['v=STSv1;'], null, []).warnings[0]).toBe('the required id= tag is missing');
    expect(parseTlsRpt(['v=TLSRPTv1; rua=mailto:a@b.test', 'v=TLSRPTv1; rua=mailto:c@b.test']).warnings[0]).toMatch(/^2 TLS-RPT records found/);
  });

  it('BIMI with pct under 100 at enforcement', () => {
    const r = analyseBimiRecords(['v=BIMI1; l=https://x.test/l.svg; a=https://x.test/a.pem'], { policy: 'quarantine', tag: 'p', pct: '50' });
    expect(r.warnings).toEqual(['DMARC pct=50: BIMI requires the policy on all mail (pct=100)']);
  });
});
