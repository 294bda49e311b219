// GET /api/v1/ssl/{domain} and the IP endpoints end to end: real TLS servers behind a real DNS server, MaxMind test data.
// @module-tag slow (left out of make test-fast): makes many TLS handshakes, four per inspection
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { createTestPki, DAY, startTlsServer, type RunningServer } from '../support/tls-fixtures.js';

const pki = createTestPki('Contract');
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let good: RunningServer;
let h: Harness;
let strict: Harness;
let proxied: Harness;

beforeAll(async () => {
  const leaf = pki.leaf({
    subject: [['CN', 'good.test']],
    dnsNames: ['good.test', 'www.good.test'],
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 200 * DAY),
  });
  good = await startTlsServer({ cert: leaf.chainPem, key: leaf.keyPem, hsts: 'max-age=63072000' });
  dns = await startDnsServer({
    'good.test': [{ type: 'A', data: '127.0.0.1' }],
    'wronghost.test': [{ type: 'A', data: '127.0.0.1' }],
    'private.test': [{ type: 'A', data: '10.1.2.3' }],
  });
  const caFile = join(mkdtempSync(join(tmpdir(), 'vls-ca-')), 'ca.pem');
  writeFileSync(caFile, pki.root.certPem);
  const common = { DNS_SERVERS: `127.0.0.1:${dns.port}`, TLS_INSPECT_PORT: String(good.port), TLS_EXTRA_CA_FILE: caFile, TLS_TIMEOUT_MS: '10000' };
  h = await startHarness({ ...common, ALLOW_PRIVATE_TARGETS: 'true' });
  strict = await startHarness(common);
  proxied = await startHarness({ TRUST_PROXY: 'true' });
});
afterAll(async () => {
  await Promise.all([h.close(), strict.close(), proxied.close()]);
  await good.close();
  await dns.close();
});

describe('GET /api/v1/ssl/{domain}', () => {
  it('inspects and grades a valid certificate served through the resolved address', async () => {
    const res = await h.call('/api/v1/ssl/good.test');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      domain: 'good.test',
      valid: true,
      grade: 'A+',
      subject: 'CN=good.test',
      subjectAlternativeNames: ['good.test', 'www.good.test'],
      protocol: 'TLSv1.3',
      chainLength: 3,
      errorMessage: null,
      hsts: true,
      warnings: [],
    });
    expect(res.body.issuer).toMatch(/CN=Contract Intermediate CA/);
    expect(res.body.serialNumber).toMatch(/^[0-9A-F]+$/);
    expect(res.body.daysUntilExpiry).toBeGreaterThanOrEqual(199);
  });

  it('grades F with a reason on a hostname mismatch, still reporting the certificate', async () => {
    const res = await h.call('/api/v1/ssl/wronghost.test');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, grade: 'F', subject: 'CN=good.test' });
    expect(res.body.errorMessage).toMatch(/host/i);
  });

  it('answers 200 grade F with errorMessage and null fields for a domain that does not exist', async () => {
    const res = await h.call('/api/v1/ssl/missing.test');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, grade: 'F', issuer: null, protocol: null });
    expect(res.body.errorMessage).toMatch(/no such domain/);
  });

  it('refuses a target resolving to a private address with 400 VALIDATION_ERROR, connecting nowhere', async () => {
    const before = good.connections();
    const res = await strict.call('/api/v1/ssl/good.test');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(good.connections()).toBe(before);
  });

  it.each(['127.0.0.1', '::ffff:127.0.0.1', '::1'])('refuses the literal target %s without connecting', async (target) => {
    const before = good.connections();
    const res = await strict.call(`/api/v1/ssl/${encodeURIComponent(target)}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/non-public address/) });
    expect(good.connections()).toBe(before);
  });

  it.each(['2130706433', '0x7f.1', '127.1', '000', '[::ffff:127.0.0.1]', 'localhost', '%0D', '%20'])(
    'answers 400 INVALID_FORMAT for %s, no host name or IP address in standard form, connecting nowhere',
    async (target) => {
      const before = good.connections();
      const res = await strict.call(`/api/v1/ssl/${target.startsWith('%') ? target : encodeURIComponent(target)}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'domain' }] });
      expect(good.connections()).toBe(before);
    },
  );

  it('answers 400 INVALID_FORMAT for a malformed domain', async () => {
    const res = await h.call('/api/v1/ssl/bad%20domain!');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
  });
});

describe('GET /api/v1/ip/{ip}', () => {
  it('answers a city-level IPv4 hit from the City database', async () => {
    const res = await h.call('/api/v1/ip/81.2.69.142');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ip: '81.2.69.142', ipType: 'IPV4', countryCode: 'GB', cityName: 'London', continentCode: 'EU', timezone: 'Europe/London' });
  });

  it('treats an IPv4-mapped IPv6 address as the IPv4 address', async () => {
    const res = await h.call('/api/v1/ip/::ffff:81.2.69.142');
    expect(res.body).toMatchObject({ ip: '81.2.69.142', ipType: 'IPV4', countryCode: 'GB' });
  });

  it('answers an IPv6 hit', async () => {
    const res = await h.call('/api/v1/ip/2001:218::1');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ipType: 'IPV6', countryCode: 'JP' });
  });

  it.each(['10.0.0.1', '192.168.1.1', '127.0.0.1', '100.64.0.1', '169.254.1.1', 'fe80::1', 'fc00::1', '::1', '0.0.0.0', '224.0.0.1', '192.0.2.1'])(
    'answers 404 for the non-public address %s',
    async (ip) => {
      const res = await h.call(`/api/v1/ip/${ip}`);
      expect(res.status).toBe(404);
      expect(res.body.message).toMatch(/not public/);
    },
  );

  it('answers 404 for a public address the data does not know', async () => {
    const res = await h.call('/api/v1/ip/8.8.8.8');
    expect(res.status).toBe(404);
  });

  it('flags an address outside every provider range and exit list as neither', async () => {
    const res = await h.call('/api/v1/ip/81.2.69.142');
    expect(res.body.security).toEqual({ isHosting: false, hostingProvider: null, isTor: false });
  });

  it('answers an address only a hosting list knows with 200, location null and its provider (not 404)', async () => {
    // 3.5.140.1 is in AWS's published 3.5.140.0/22 (data/ip/hosting-ranges.csv); MaxMind's test databases lack it.
    const res = await h.call('/api/v1/ip/3.5.140.1');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ip: '3.5.140.1', ipType: 'IPV4', countryCode: null, cityName: null, asn: null, isEU: false });
    expect(res.body.security).toEqual({ isHosting: true, hostingProvider: 'Amazon Web Services', isTor: false });
  });

  it.each([
    // MaxMind's test ASN database: 23.32.0.0/11 is AS35994 (Akamai), 67.43.149.0/24 AS35908 with no organisation
    // (the list's name then), 50.128.0.0/9 AS7922 (Comcast); data/ip/hosting-asns.txt lists the first two.
    ['23.32.0.1', 35994, { isHosting: true, hostingProvider: 'Akamai Technologies, Inc.', isTor: false }],
    ['67.43.149.1', 35908, { isHosting: true, hostingProvider: 'VPLSNET - Krypt Technologies, US', isTor: false }],
    ['50.128.0.1', 7922, { isHosting: false, hostingProvider: null, isTor: false }],
  ])('flags %s by its network owner (AS%i) on the hosting ASN list', async (ip, asn, security) => {
    const res = await h.call(`/api/v1/ip/${ip}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ip, asn, security });
  });

  it('answers a Tor exit of the snapshot with isTor true', async () => {
    const res = await h.call('/api/v1/ip/185.220.101.1');
    expect(res.status).toBe(200);
    expect(res.body.security).toMatchObject({ isTor: true });
  });

  it('answers an IPv6 address in a provider range; the Tor flag is unknown (the exit list is IPv4 only)', async () => {
    const res = await h.call('/api/v1/ip/2600:1f00:1000::1');
    expect(res.status).toBe(200);
    expect(res.body.security).toEqual({ isHosting: true, hostingProvider: 'Amazon Web Services', isTor: null });
  });

  it.each(['%0D', '%20', '01.2.3.4', 'fe80::1%25eth0', '[::1]', '1.2.3.4.'])('answers 400 INVALID_FORMAT for %s (a blank value too)', async (ip) => {
    const res = await h.call(`/api/v1/ip/${ip}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', message: 'parameter ip is malformed: must be an IPv4 or IPv6 address' });
  });

  it('answers 400 INVALID_FORMAT for something that is not an IP', async () => {
    const res = await h.call('/api/v1/ip/999.1.1.1');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
  });
});

describe('GET /api/v1/ip', () => {
  it('answers 404 for a loopback caller', async () => {
    const res = await h.call('/api/v1/ip');
    expect(res.status).toBe(404);
  });

  it('ignores X-Forwarded-For without TRUST_PROXY', async () => {
    const res = await h.call('/api/v1/ip', { headers: { 'X-Forwarded-For': '81.2.69.142' } });
    expect(res.status).toBe(404);
  });

  it('uses the left-most X-Forwarded-For with TRUST_PROXY', async () => {
    const res = await proxied.call('/api/v1/ip', { headers: { 'X-Forwarded-For': '81.2.69.142, 10.0.0.1' } });
    expect(res.status).toBe(200);
    expect(res.body.ip).toBe('81.2.69.142');
  });
});

describe('caches in /metrics', () => {
  it('exposes the GeoIP and TLS caches', async () => {
    await h.call('/api/v1/ip/81.2.69.142');
    await h.call('/api/v1/ip/81.2.69.142');
    await h.call('/api/v1/ssl/good.test');
    const text = await (await h.fetch('/metrics')).text();
    expect(Number(/cache_entries\{cache="geoip"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
    expect(Number(/cache_hits_total\{cache="geoip"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
    expect(Number(/cache_hits_total\{cache="tls"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
  });
});

describe('readiness', () => {
  it('is ready once the GeoIP databases are open', async () => {
    const res = await h.fetch('/readyz');
    expect(res.status).toBe(200);
    expect((await res.json()).checks.geoip).toBe(true);
  });

  it('answers 503 on IP lookups and /readyz, saying so, when the bundled databases are absent (make geoip not run)', async () => {
    const broken = await startHarness({ GEOIP_CITY_DB: '', GEOIP_ASN_DB: '' });
    try {
      expect((await broken.fetch('/readyz')).status).toBe(503);
      const res = await broken.call('/api/v1/ip/81.2.69.142');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'geolocation data is not available: the GeoIP databases could not be opened' });
      expect(res.headers.get('retry-after')).toBe('60');
    } finally {
      await broken.close();
    }
  });
});
