// Hosting by network owner: the hosting ASN list (X4BNet's format, RFC 6793 4-byte ASNs) combined with the published
// ranges and the GeoIP ASN database's answer, down to GET /api/v1/ip/{ip}.
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openGeoIp } from '../../src/adapters/geoip/geoip-reader.js';
import { asnIndex, hostingAsnsFromText, loadHostingAsns, type HostingAsns } from '../../src/adapters/ip-data/hosting-asns.js';
import { createIpSecurity, hostingRangesFromText, type LoadedRanges } from '../../src/adapters/ip-data/ip-lists.js';
import { createTlsProber } from '../../src/adapters/tls/prober.js';
import { classifyIp } from '../../src/domain/ip-ranges.js';
import { projectPath } from '../../src/http/spec.js';
import { createNetworkOperations } from '../../src/operations/network.js';
import { GEOIP_TEST_ASN_DB, GEOIP_TEST_CITY_DB } from '../fixtures/paths.js';

const ip = (a: string) => classifyIp(a)!;
/** The handler's argument for a path parameter (as openapi-backend hands it). */
const request = (params: Record<string, string>) =>
  ({ request: { params, query: {}, requestBody: undefined, headers: {}, ip: '127.0.0.1' } }) as unknown as Parameters<ReturnType<typeof createNetworkOperations>['lookupIp']>[0];
const list = (text: string): HostingAsns => ({ path: 'test', date: '2026-07-26', ...hostingAsnsFromText(text) });
const ranges = (text: string): LoadedRanges => ({ path: 'test', date: '2026-07-26', ...hostingRangesFromText(text) });

describe('hostingAsnsFromText', () => {
  it.each([
    ['X4BNet lines', 'AS24940 # HETZNER-AS, DE\n', 'HETZNER-AS, DE'],
    ["brianhama's CSV", 'ASN,Entity\n24940,"HETZNER-AS, DE"\n', 'HETZNER-AS, DE'],
    ['a bare number', '24940\n', 'AS24940'],
    ['a tab before the comment, lower-case prefix', 'as24940\t# Hetzner\n', 'Hetzner'],
  ])('reads %s', (_what, text, name) => {
    const read = hostingAsnsFromText(`# date: 2026-07-26\n${text}`);
    expect([...read.asns]).toEqual([24940]);
    expect(read.names).toEqual([name]);
  });

  it('sorts, keeps each ASN once under the first name given, and counts every line', () => {
    const read = hostingAsnsFromText('AS20773 # HOSTEUROPE-AS, DE\nAS16276 # OVH\nAS20773 # GODADDY, DE\nAS4294967295 # the last 4-byte ASN\n');
    expect([...read.asns]).toEqual([16276, 20773, 4294967295]);
    expect(read.names).toEqual(['OVH', 'HOSTEUROPE-AS, DE', 'the last 4-byte ASN']);
    expect(read.entries).toBe(4);
    expect(asnIndex(read, 20773)).toBe(1);
    expect(asnIndex(read, 20774)).toBe(-1);
  });

  it.each([
    ['a line that is no ASN', 'AS1\nhetzner\n', /asns.txt: line 2 is not "AS<number> # name"/],
    ['an ASN beyond 32 bits', 'AS4294967296\n', /line 1/],
    ['no ASN at all', '# nothing\n\n', /no ASN/],
  ])('refuses %s', (_what, text, message) => {
    expect(() => hostingAsnsFromText(text, 'asns.txt')).toThrow(message);
  });
});

describe('loadHostingAsns', () => {
  it("dates a file without a date line by its modification day, and names the file in an error", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'asns-'));
    try {
      const file = join(dir, 'asns.txt');
      await writeFile(file, 'AS64500 # EXAMPLE\n');
      await utimes(file, new Date('2026-05-04T12:00:00Z'), new Date('2026-05-04T12:00:00Z'));
      expect(await loadHostingAsns(file)).toMatchObject({ path: file, date: '2026-05-04', entries: 1 });
      await writeFile(file, 'AS64500\n<html>\n');
      await expect(loadHostingAsns(file)).rejects.toThrow(`${file}: line 2`);
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});

describe('createIpSecurity with the hosting ASN list', () => {
  const hosting = ranges('198.51.100.0/24,Example Cloud\n');
  const asns = list('AS64500 # EXAMPLE-DC, ZZ\nAS64501 # OTHER-DC\n');
  const security = createIpSecurity(hosting, null, asns);

  it.each([
    ['a published range names its provider, whatever the ASN', '198.51.100.7', { asn: 64500, asnOrganization: 'Example DC Ltd' }, true, 'Example Cloud'],
    ['a listed ASN names the AS organisation the database gives', '203.0.113.9', { asn: 64500, asnOrganization: 'Example DC Ltd' }, true, 'Example DC Ltd'],
    ["a listed ASN without an organisation takes the list's name", '203.0.113.9', { asn: 64500, asnOrganization: null }, true, 'EXAMPLE-DC, ZZ'],
    ['an ASN not listed is not hosting', '203.0.113.9', { asn: 64496, asnOrganization: 'Home ISP' }, false, null],
    ['no ASN known: the ranges answer', '203.0.113.9', null, false, null],
    ['IPv6 with a listed ASN', '2001:db8::1', { asn: 64501, asnOrganization: 'Other DC' }, true, 'Other DC'],
  ])('%s', (_what, address, as, isHosting, hostingProvider) => {
    expect(security.lookup(ip(address), as)).toEqual({ isHosting, hostingProvider, isTor: null });
  });

  it('without ranges of the family and without an ASN, hosting is unknown; with a known ASN it is "no"', () => {
    const v4only = createIpSecurity(hosting, null, asns);
    expect(v4only.lookup(ip('2001:db8::1')).isHosting).toBeNull();
    expect(v4only.lookup(ip('2001:db8::1'), { asn: 64496, asnOrganization: 'Home ISP' }).isHosting).toBe(false);
    expect(createIpSecurity(null, null, null).lookup(ip('203.0.113.9'), { asn: 64500, asnOrganization: 'Example DC Ltd' }).isHosting).toBeNull();
  });

  it('answers one frozen object per ASN and organisation: nothing is made on a repeat', () => {
    const as = { asn: 64500, asnOrganization: 'Example DC Ltd' };
    const first = security.lookup(ip('203.0.113.9'), as);
    expect(security.lookup(ip('203.0.113.10'), { ...as })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(security.lookup(ip('203.0.113.9'), { asn: 64500, asnOrganization: 'Renamed DC' }).hostingProvider).toBe('Renamed DC');
  });
});

describe('the shipped list (data/ip/hosting-asns.txt)', () => {
  let shipped: HostingAsns;
  beforeAll(async () => {
    shipped = await loadHostingAsns(projectPath('data/ip/hosting-asns.txt'));
  });

  it('is dated by its own date line and holds the X4BNet data-centre list', () => {
    expect(shipped.date).toBe('2026-07-26');
    expect(shipped.asns.length).toBeGreaterThan(800);
  });

  it.each([
    [63949, 'Linode/Akamai'], [20473, 'Vultr (Choopa)'], [24940, 'Hetzner'], [16276, 'OVHcloud'], [12876, 'Scaleway'], [51167, 'Contabo'], [60781, 'Leaseweb'],
  ])('lists AS%i (%s)', (asn) => {
    expect(asnIndex(shipped, asn)).toBeGreaterThanOrEqual(0);
  });

  it.each([
    [7850, 'CityLink Fiber'], [36290, 'The Cable of St. Kitts'], [394330, 'LTD Broadband'], [7922, 'Comcast'], [3320, 'Deutsche Telekom'], [3215, 'Orange'], [55836, 'Reliance Jio'],
  ])('does not list AS%i (%s), an access network', (asn) => {
    expect(asnIndex(shipped, asn)).toBe(-1);
  });
});

describe('GET /api/v1/ip/{ip} flags an address by its network owner', () => {
  it("names the AS organisation of MaxMind's test database for a listed ASN, and leaves others alone", async () => {
    const geo = await openGeoIp({ cityDb: GEOIP_TEST_CITY_DB, asnDb: GEOIP_TEST_ASN_DB });
    const security = createIpSecurity(ranges('198.51.100.0/24,Example Cloud\n'), null, list('AS1221 # TELSTRA (listed for this test)\n'));
    const tls = createTlsProber({ resolve: async () => [], port: 1, timeoutMs: 100, allowPrivate: false });
    const ops = createNetworkOperations({ tls, geo: () => geo, security: () => security, trustProxy: false, resolver: null as never, mailSecurity: null as never });
    const listed = await ops.lookupIp(request({ ip: '1.128.0.1' }));
    expect(listed.body).toMatchObject({ asn: 1221, security: { isHosting: true, hostingProvider: 'Telstra Pty Ltd', isTor: null } });
    const other = await ops.lookupIp(request({ ip: '89.160.20.112' }));
    expect(other.body).toMatchObject({ asn: 29518, security: { isHosting: false, hostingProvider: null } });
  });
});
