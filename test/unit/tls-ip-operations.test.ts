// TLS inspection and IP geolocation operation handlers: input to adapters to reply, without HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/adapters/dns/resolver.js';
import { openGeoIp, type GeoIp } from '../../src/adapters/geoip/geoip-reader.js';
import { createTlsProber } from '../../src/adapters/tls/prober.js';
import { addressResolver } from '../../src/adapters/tls/target-guard.js';
import { type ApiError } from '../../src/errors.js';
import { asApiError } from '../../src/error-answers.js';
import { createIpSecurity } from '../../src/adapters/ip-data/ip-lists.js';
import { createNetworkOperations, type NetworkDeps, type NetworkOperations as TlsIpOperations } from '../../src/operations/network.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { DAY, createTestPki, startTlsServer, type RunningServer } from '../support/tls-fixtures.js';
import { GEOIP_TEST_ASN_DB, GEOIP_TEST_CITY_DB } from '../fixtures/paths.js';

/** openapi-backend's context as a handler gets it. */
function request(over: { params?: Record<string, string>; headers?: Record<string, string | undefined>; ip?: string } = {}): any {
  return { request: { params: over.params ?? {}, query: {}, requestBody: undefined, headers: over.headers ?? {}, ip: over.ip ?? '127.0.0.1' } };
}

/** The TLS and IP handlers (the DNS ones are tested in dns-email-operations.test.ts). */
const createTlsIpOperations = (deps: Pick<NetworkDeps, 'tls' | 'geo' | 'trustProxy'> & Partial<Pick<NetworkDeps, 'security'>>): TlsIpOperations =>
  createNetworkOperations({ security: () => createIpSecurity(null, null), ...deps, resolver: null as never, mailSecurity: null as never });

/** The ApiError a handler's throw answers as (fails the test when it returns instead, or faults). */
async function failure(run: () => unknown): Promise<ApiError> {
  try {
    await run();
  } catch (e) {
    const api = asApiError(e);
    if (api) return api;
    throw e;
  }
  throw new Error('expected an ApiError');
}

let geo: GeoIp;
const unusedTls = createTlsProber({ resolve: async () => [], port: 1, timeoutMs: 100, allowPrivate: false });
const ops = (trustProxy: boolean, g: GeoIp | null = geo): TlsIpOperations => createTlsIpOperations({ tls: unusedTls, geo: () => g, trustProxy });

beforeAll(async () => {
  geo = await openGeoIp({ cityDb: GEOIP_TEST_CITY_DB, asnDb: GEOIP_TEST_ASN_DB });
});

describe('lookupIp (GET /api/v1/ip/{ip})', () => {
  it.each([
    ['81.2.69.142', { ip: '81.2.69.142', ipType: 'IPV4', cityName: 'London', countryCode: 'GB' }],
    ['2001:480:10::1', { ip: '2001:480:10::1', ipType: 'IPV6', cityName: 'San Diego' }],
    ['89.160.20.112', { isEU: true, asn: 29518, asnOrganization: 'Bredband2 AB' }],
    ['1.128.0.1', { asn: 1221, asnOrganization: 'Telstra Pty Ltd', countryCode: null, cityName: null }],
    ['2001:1700::1', { ipType: 'IPV6', asn: 6730, countryCode: null }],
    ['::ffff:81.2.69.142', { ip: '81.2.69.142', ipType: 'IPV4', cityName: 'London' }],
  ])('%s → 200', async (ip, expected) => {
    const reply = await ops(false).lookupIp(request({ params: { ip } }));
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject(expected);
    // No hosting or Tor list in this set-up: the flags say "unknown", not "no".
    expect(reply.body).toEqual({ ...geo.lookup(ip), security: { isHosting: null, hostingProvider: null, isTor: null } });
  });

  it.each(['9.9.9.9', '2001:4860::1'])('%s: no data → 404', async (ip) => {
    const err = await failure(() => ops(false).lookupIp(request({ params: { ip } })));
    expect(err).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND', message: `no geolocation data for address ${ip}` });
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['169.254.1.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this-network'],
    ['224.0.0.251', 'multicast'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.10', 'documentation'],
    ['203.0.113.10', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.0.1', 'ietf-protocol-assignments'],
    ['240.1.2.3', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:192.168.1.1', 'private'],
  ])('%s (%s) → 404 not public', async (ip, range) => {
    const err = await failure(() => ops(false).lookupIp(request({ params: { ip } })));
    expect(err).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND' });
    expect(err.message).toMatch(new RegExp(`is not public \\(${range}\\)`));
  });

  it.each(['not-an-ip', '999.1.1.1', '1.2.3', '2130706433', '0x7f.0.0.1', '[::1]', '1:2:3:4:5:6:7:8:9'])('%j → 400 INVALID_FORMAT', async (ip) => {
    const err = await failure(() => ops(false).lookupIp(request({ params: { ip } })));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT', details: [{ field: 'ip', message: 'not an IPv4 or IPv6 address' }] });
  });

  it('a blank ip → 400 INVALID_FORMAT: given, not absent (issue #29)', async () => {
    const err = await failure(() => ops(false).lookupIp(request({ params: { ip: ' ' } })));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT' });
  });

  it('databases not open yet → 503 with Retry-After', async () => {
    const err = await failure(() => ops(false, null).lookupIp(request({ params: { ip: '81.2.69.142' } })));
    expect(err).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', message: 'geolocation data is loading' });
    expect(err.headers['Retry-After']).toBeDefined();
  });
});

describe('lookupOwnIp (GET /api/v1/ip)', () => {
  it.each([
    ['without TRUST_PROXY the header is ignored', false, '81.2.69.142', '89.160.20.112', 'London'],
    ['with TRUST_PROXY the left-most X-Forwarded-For wins', true, '127.0.0.1', '89.160.20.112, 10.0.0.1', 'Linköping'],
    ['with TRUST_PROXY and no header the peer address is used', true, '81.2.69.142', undefined, 'London'],
    ['with TRUST_PROXY empty list elements are skipped (RFC 9110 5.6.1)', true, '127.0.0.1', ' , 89.160.20.112, 10.0.0.1', 'Linköping'],
    ['with TRUST_PROXY a header of empty elements only means the peer', true, '81.2.69.142', ' , ', 'London'],
    ['with TRUST_PROXY an IPv4 entry with a port', true, '127.0.0.1', '81.2.69.142:5555', 'London'],
    ['with TRUST_PROXY a bracketed IPv6 entry with a port', true, '127.0.0.1', '[2001:480:10::1]:443', 'San Diego'],
    ['a mapped peer address', false, '::ffff:89.160.20.112', undefined, 'Linköping'],
  ])('%s', async (_name, trustProxy, ip, xff, city) => {
    const headers = xff === undefined ? {} : { 'x-forwarded-for': xff };
    const reply = await ops(trustProxy).lookupOwnIp(request({ ip, headers }));
    expect(reply.body.cityName).toBe(city);
  });

  it.each([
    ['a loopback peer without TRUST_PROXY, whatever the header says', false, '127.0.0.1', '81.2.69.142'],
    ['a private left-most X-Forwarded-For with TRUST_PROXY', true, '81.2.69.142', '10.0.0.1, 81.2.69.142'],
    ['a mapped loopback peer', false, '::ffff:127.0.0.1', undefined],
  ])('%s → 404', async (_name, trustProxy, ip, xff) => {
    const headers = xff === undefined ? {} : { 'x-forwarded-for': xff };
    const err = await failure(() => ops(trustProxy).lookupOwnIp(request({ ip, headers })));
    expect(err).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND' });
    expect(err.message).toMatch(/^your address .* is not public/);
  });

  it('a malformed left-most X-Forwarded-For with TRUST_PROXY → 400', async () => {
    const err = await failure(() => ops(true).lookupOwnIp(request({ ip: '81.2.69.142', headers: { 'x-forwarded-for': 'unknown, 81.2.69.142' } })));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT', details: [{ field: 'X-Forwarded-For' }] });
  });
});

describe('inspectTlsCertificate (GET /api/v1/ssl/{domain}) through the test DNS server', () => {
  const T0 = Math.floor(Date.now() / 1000) * 1000;
  const pki = createTestPki('Ops');
  const leaf = pki.leaf({ subject: [['CN', 'shop.test']], dnsNames: ['shop.test'], notBefore: new Date(T0 - DAY), notAfter: new Date(T0 + 200 * DAY) });
  let dns: TestDnsServer;
  let server: RunningServer;
  let open: TlsIpOperations;
  let guarded: TlsIpOperations;

  beforeAll(async () => {
    dns = await startDnsServer({ 'shop.test': [{ type: 'A', data: '127.0.0.1' }] });
    server = await startTlsServer({ cert: leaf.chainPem, key: leaf.keyPem, hsts: 'max-age=31536000' });
    const resolve = addressResolver(createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 5000 }));
    const base = { resolve, port: server.port, timeoutMs: 2000, extraCaPem: pki.root.certPem, now: () => new Date(T0) };
    open = createTlsIpOperations({ tls: createTlsProber({ ...base, allowPrivate: true }), geo: () => geo, trustProxy: false });
    guarded = createTlsIpOperations({ tls: createTlsProber({ ...base, allowPrivate: false }), geo: () => geo, trustProxy: false });
  });
  afterAll(async () => {
    await server.close();
    await dns.close();
  });

  it('a valid certificate → 200 with the result', async () => {
    const reply = await open.inspectTlsCertificate(request({ params: { domain: 'Shop.Test' } }));
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ domain: 'shop.test', valid: true, grade: 'A+', chainLength: 3, daysUntilExpiry: 200, hsts: true, hstsMaxAge: 31536000, errorMessage: null });
  });

  it('an unknown domain → 200 with grade F and the reason', async () => {
    const reply = await open.inspectTlsCertificate(request({ params: { domain: 'nowhere.test' } }));
    expect(reply.body).toMatchObject({ valid: false, grade: 'F', errorMessage: 'no such domain: nowhere.test', issuer: null, warnings: [] });
  });

  it('a private target without ALLOW_PRIVATE_TARGETS → 400 VALIDATION_ERROR and no connection', async () => {
    const before = server.connections();
    const err = await failure(() => guarded.inspectTlsCertificate(request({ params: { domain: 'shop.test' } })));
    expect(err).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(server.connections()).toBe(before);
  });

  it.each(['bad..test', 'no_underscores.test', 'single', 'x'.repeat(300)])('%j → 400 INVALID_FORMAT', async (domain) => {
    const err = await failure(() => open.inspectTlsCertificate(request({ params: { domain } })));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT', details: [{ field: 'domain' }] });
  });

  it('a blank domain → 400 INVALID_FORMAT: given, not absent (issue #29)', async () => {
    const err = await failure(() => open.inspectTlsCertificate(request({ params: { domain: ' ' } })));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT' });
  });
});
