// GeoIP reader (MaxMind DB format) over MaxMind test databases: City and ASN fields, gzip, one database alone, cache bound, bad files.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { BlockList, isIPv4 } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeoDatabaseError, openGeoIp, type GeoIp, type GeoResult } from '../../src/adapters/geoip/geoip-reader.js';
import { GEOIP_TEST_DIR as GEOIP_TESTDATA } from '../fixtures/paths.js';

// MaxMind's test databases and their JSON sources: test/fixtures/geoip
const CITY_DB = join(GEOIP_TESTDATA, 'GeoIP2-City-Test.mmdb');
const LITE_CITY_DB = join(GEOIP_TESTDATA, 'GeoLite2-City-Test.mmdb');
const ASN_DB = join(GEOIP_TESTDATA, 'GeoLite2-ASN-Test.mmdb');

type SourceRecord = Record<string, any>;
const source = (file: string): Array<Record<string, SourceRecord>> => JSON.parse(readFileSync(join(GEOIP_TESTDATA, file), 'utf8'));

/** The record of the most specific network of a JSON source holding `ip` (IPv4 also matches ::a.b.c.d/n networks). */
function sourceRecord(file: string, ip: string): SourceRecord | null {
  let best: { bits: number; rec: SourceRecord } | null = null;
  for (const entry of source(file)) {
    const [cidr, rec] = Object.entries(entry)[0];
    let [net, bitsText] = cidr.split('/');
    let bits = Number(bitsText);
    const list = new BlockList();
    if (isIPv4(ip)) {
      if (net.startsWith('::') && net.includes('.')) {
        net = net.slice(2);
        bits -= 96;
      }
      if (!isIPv4(net)) continue;
      list.addSubnet(net, bits, 'ipv4');
      if (!list.check(ip, 'ipv4')) continue;
    } else {
      if (isIPv4(net) || net.includes('.')) continue;
      list.addSubnet(net, bits, 'ipv6');
      if (!list.check(ip, 'ipv6')) continue;
    }
    if (!best || bits > best.bits) best = { bits, rec };
  }
  return best?.rec ?? null;
}

/** What the JSON sources say about an address, in the result's terms. */
function expectedFromSource(ip: string, cityFile = 'GeoIP2-City-Test.json'): Omit<GeoResult, 'ip' | 'ipType'> | null {
  const c = sourceRecord(cityFile, ip);
  const a = sourceRecord('GeoLite2-ASN-Test.json', ip);
  if (!c && !a) return null;
  const sub = c?.subdivisions?.[0];
  return {
    countryCode: c?.country?.iso_code ?? null,
    countryName: c?.country?.names?.en ?? null,
    regionName: sub?.names?.en ?? null,
    regionCode: sub?.iso_code ?? null,
    cityName: c?.city?.names?.en ?? null,
    continentCode: c?.continent?.code ?? null,
    continentName: c?.continent?.names?.en ?? null,
    lat: c?.location?.latitude ?? null,
    lng: c?.location?.longitude ?? null,
    zipCode: c?.postal?.code ?? null,
    timezone: c?.location?.time_zone ?? null,
    isEU: c?.country?.is_in_european_union === true,
    asn: a?.autonomous_system_number ?? null,
    asnOrganization: a?.autonomous_system_organization ?? null,
  };
}

let geo: GeoIp;
beforeAll(async () => {
  geo = await openGeoIp({ cityDb: CITY_DB, asnDb: ASN_DB });
});

describe('openGeoIp over the MaxMind test databases', () => {
  it.each([
    ['81.2.69.142', 'IPV4', { cityName: 'London', countryCode: 'GB', regionCode: 'ENG', isEU: false, asn: null }],
    ['89.160.20.112', 'IPV4', { cityName: 'Linköping', countryCode: 'SE', isEU: true, asn: 29518, asnOrganization: 'Bredband2 AB' }],
    ['2.125.160.216', 'IPV4', { cityName: 'Boxford', zipCode: 'OX1', isEU: false }],
    ['216.160.83.56', 'IPV4', { cityName: 'Milton', regionName: 'Washington', regionCode: 'WA', asn: 209, asnOrganization: null }],
    ['175.16.199.1', 'IPV4', { cityName: 'Changchun', countryName: 'China', continentName: 'Asia' }],
    ['214.0.0.1', 'IPV4', { cityName: 'Singapore', asn: 721 }],
    ['2.3.3.1', 'IPV4', { continentCode: 'EU', continentName: 'Europe', countryCode: null, cityName: null, lat: null }],
    ['2001:480:10::1', 'IPV6', { cityName: 'San Diego', countryCode: 'US', zipCode: '92101' }],
    ['2a02:cf40::1', 'IPV6', { countryCode: 'NO', cityName: null, regionName: null, timezone: 'Europe/Oslo' }],
  ])('%s: a city hit agrees with the JSON source', (ip, ipType, literal) => {
    const r = geo.lookup(ip);
    expect(r).toEqual({ ip, ipType, ...expectedFromSource(ip) });
    expect(r).toMatchObject(literal);
  });

  it.each([
    ['1.128.0.1', 'IPV4', 1221, 'Telstra Pty Ltd'],
    ['12.81.96.1', 'IPV4', 7018, null],
    ['2001:1700::1', 'IPV6', 6730, 'Sunrise Communications AG'],
  ])('%s: an ASN-only hit has null location fields', (ip, ipType, asn, org) => {
    const r = geo.lookup(ip);
    expect(r).toEqual({ ip, ipType, ...expectedFromSource(ip) });
    expect(r).toMatchObject({ asn, asnOrganization: org, countryCode: null, cityName: null, continentName: null, lat: null, isEU: false });
  });

  it.each(['9.9.9.9', '8.8.8.8', '2001:4860::1'])('%s: in neither database → null', (ip) => {
    expect(expectedFromSource(ip)).toBeNull();
    expect(geo.lookup(ip)).toBeNull();
  });

  it.each([
    ['::ffff:81.2.69.142', '81.2.69.142'],
    ['::ffff:59a0:1470', '89.160.20.112'],
    ['0:0:0:0:0:ffff:89.160.20.112', '89.160.20.112'],
  ])('%s: IPv4-mapped IPv6 is looked up as %s', (mapped, ip) => {
    const direct = geo.lookup(ip);
    expect(direct).not.toBeNull();
    expect(geo.lookup(mapped)).toEqual(direct);
  });

  it('a mapped address with data answers as the IPv4 address', () => {
    expect(geo.lookup('::ffff:81.2.69.142')).toMatchObject({ ip: '81.2.69.142', ipType: 'IPV4', cityName: 'London' });
  });

  it('canonicalises the IPv6 text it reports', () => {
    expect(geo.lookup('2001:0480:0010:0000:0000:0000:0000:0001')?.ip).toBe('2001:480:10::1');
  });

  it.each(['', 'not-an-ip', '1.2.3', '2130706433'])('%j is not an address → null', (s) => {
    expect(geo.lookup(s)).toBeNull();
  });

  it('reports each database type and build date', () => {
    expect(geo.ready).toBe(true);
    expect(geo.databases.map((d) => [d.kind, d.databaseType])).toEqual([
      ['city', 'GeoIP2-City'],
      ['asn', 'GeoLite2-ASN'],
    ]);
    for (const d of geo.databases) expect(new Date(d.buildDate).toISOString()).toBe(d.buildDate);
  });
});

describe('openGeoIp options and files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'geoip-test-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a gzipped database (.mmdb.gz) like the plain one', async () => {
    const gz = join(dir, 'GeoLite2-City-Test.mmdb.gz');
    writeFileSync(gz, gzipSync(readFileSync(LITE_CITY_DB)));
    const [plain, zipped] = await Promise.all([openGeoIp({ cityDb: LITE_CITY_DB }), openGeoIp({ cityDb: gz })]);
    expect(zipped.lookup('89.160.20.112')).toEqual(plain.lookup('89.160.20.112'));
    expect(zipped.lookup('89.160.20.112')).toEqual({ ip: '89.160.20.112', ipType: 'IPV4', ...expectedFromSource('89.160.20.112', 'GeoLite2-City-Test.json'), asn: null, asnOrganization: null });
  });

  it('works with a City database alone (ASN fields null)', async () => {
    const g = await openGeoIp({ cityDb: LITE_CITY_DB });
    expect(g.lookup('81.2.69.142')).toMatchObject({ cityName: 'London', asn: null, asnOrganization: null });
    expect(g.lookup('1.128.0.1')).toBeNull();
  });

  it('works with an ASN database alone', async () => {
    const g = await openGeoIp({ asnDb: ASN_DB });
    expect(g.lookup('1.128.0.1')).toMatchObject({ asn: 1221, countryCode: null });
  });

  it('keeps results by canonical address, misses included, within its bound', async () => {
    const g = await openGeoIp({ cityDb: LITE_CITY_DB, cacheEntries: 2 });
    const first = g.lookup('81.2.69.142');
    expect(g.lookup('::ffff:81.2.69.142')).toBe(first); // the same address in another form: a hit
    expect(g.lookup('1.128.0.1')).toBeNull();
    expect(g.lookup('1.128.0.1')).toBeNull();
    expect(g.stats()).toEqual({ hits: 2, misses: 2, size: 2 });
    g.lookup('89.160.20.112');
    expect(g.stats()).toMatchObject({ misses: 3, size: 2 });
  });

  it('rejects a database of the wrong type', async () => {
    await expect(openGeoIp({ cityDb: ASN_DB })).rejects.toThrow(/is not a City database/);
    await expect(openGeoIp({ asnDb: CITY_DB })).rejects.toThrow(/is not an ASN database/);
  });

  it('reports both databases when both fail, not only the first to fail', async () => {
    const err = await openGeoIp({ cityDb: join(dir, 'absent-city.mmdb'), asnDb: CITY_DB }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: GeoDatabaseError) => e.kind)).toEqual(['city', 'asn']);
  });

  it('rejects a missing file, saying which database and why', async () => {
    const err = await openGeoIp({ cityDb: join(dir, 'absent.mmdb') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GeoDatabaseError);
    expect(err).toMatchObject({ kind: 'city', message: expect.stringMatching(/absent\.mmdb: no such file or directory$/) });
  });
});
