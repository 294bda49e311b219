// IP geolocation and ASN lookup in MaxMind DB files (GeoIP2/GeoLite2 City and ASN schemas; .mmdb or gzipped .mmdb.gz).
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import { Reader, type AsnResponse, type CityResponse } from 'maxmind';
import { classifyIp, type IpClass } from '../../domain/ip-ranges.js';
import { fileProblem } from '../files/startup-files.js';
import type { components } from '../../../generated/api.js';

const CHUNK = 1 << 20;

/**
 * Inflate a gzip file into one buffer sized from the gzip trailer (ISIZE), streaming, so that peak
 * memory stays near the inflated size (zlib.gunzip would hold the chunks and their concatenation).
 */
async function inflateFile(path: string): Promise<Buffer> {
  const fh = await open(path, 'r');
  let expected: number;
  try {
    const { size } = await fh.stat();
    const tail = Buffer.alloc(4);
    await fh.read(tail, 0, 4, Math.max(0, size - 4));
    expected = tail.readUInt32LE(0);
  } finally {
    await fh.close();
  }
  let out = Buffer.allocUnsafe(expected);
  let off = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK }).pipe(createGunzip({ chunkSize: CHUNK }))) {
    const c = chunk as Buffer;
    if (off + c.length > out.length) out = Buffer.concat([out.subarray(0, off), Buffer.allocUnsafe(Math.max(c.length, out.length))]);
    c.copy(out, off);
    off += c.length;
  }
  return out.subarray(0, off);
}

/** The contract's IpGeolocationResult (openapi.yaml is the source of truth) less `security`, which other lists give. */
export type GeoResult = Omit<components['schemas']['IpGeolocationResult'], 'security'>;

interface GeoDatabaseInfo {
  kind: 'city' | 'asn';
  path: string;
  /** From the database metadata, e.g. 'GeoLite2-City'. */
  databaseType: string;
  /** Build date from the metadata, ISO 8601. */
  buildDate: string;
}

export interface GeoIp {
  /**
   * Look up an IP address (any textual form, or one already classified; IPv4-mapped IPv6 is looked up
   * as IPv4). Null when neither database knows it or the input is not an IP. Results are shared: do not mutate.
   */
  lookup(ip: string | IpClass): GeoResult | null;
  /** True once the databases are open (always true for an object returned by openGeoIp; false for UNAVAILABLE_GEOIP). */
  ready: boolean;
  databases: GeoDatabaseInfo[];
  /** The result cache (by canonical address), for /metrics. */
  stats(): { hits: number; misses: number; size: number };
}

export interface GeoIpOptions {
  /** Path of a City (or Country) database: GEOIP_CITY_DB. */
  cityDb?: string;
  /** Path of an ASN database: GEOIP_ASN_DB. */
  asnDb?: string;
  /** Looked-up addresses whose results are kept (LRU); default 10,000 (about 6 MB at most). */
  cacheEntries?: number;
}

/** English names of the seven continent codes, for records without names. */
const CONTINENT_NAMES: Record<string, string> = {
  AF: 'Africa',
  AN: 'Antarctica',
  AS: 'Asia',
  EU: 'Europe',
  NA: 'North America',
  OC: 'Oceania',
  SA: 'South America',
};

/** A database that cannot serve as its kind: unreadable, not a MaxMind DB, or of the other schema. */
export class GeoDatabaseError extends Error {
  constructor(
    readonly kind: 'city' | 'asn',
    message: string,
  ) {
    super(message);
    this.name = 'GeoDatabaseError';
  }
}

async function loadReader<T extends CityResponse | AsnResponse>(
  path: string,
  kind: 'city' | 'asn',
): Promise<{ reader: Reader<T>; info: GeoDatabaseInfo }> {
  let reader: Reader<T>;
  try {
    let buf = path.endsWith('.gz') ? await inflateFile(path) : await readFile(path);
    if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) buf = await inflateFile(path);
    reader = new Reader<T>(buf);
  } catch (err) {
    const fromFileSystem = (err as NodeJS.ErrnoException).syscall !== undefined;
    throw new GeoDatabaseError(kind, `${path}: ${fromFileSystem ? fileProblem(err) : 'not a MaxMind DB file'}`);
  }
  const type = reader.metadata.databaseType;
  const fits = kind === 'city' ? /City|Country|Enterprise/i.test(type) : /ASN|ISP/i.test(type);
  if (!fits) throw new GeoDatabaseError(kind, `${path}: database type ${type} is not a${kind === 'city' ? ' City' : 'n ASN'} database`);
  return { reader, info: { kind, path, databaseType: type, buildDate: reader.metadata.buildEpoch.toISOString() } };
}

/** Stands in once the databases could not be opened: not ready, knows no address. */
export const UNAVAILABLE_GEOIP: GeoIp = Object.freeze({
  ready: false,
  databases: [],
  lookup: () => null,
  stats: () => ({ hits: 0, misses: 0, size: 0 }),
});

/** Marks a cached "no data for this address". */
const NONE = 0;

const en = (names?: { en?: string }): string | null => names?.en ?? null;

/**
 * Open the databases (read asynchronously; .mmdb.gz is inflated in memory). Rejects with GeoDatabaseError when a
 * file is missing, unreadable or of the wrong type, with an AggregateError of both when both are.
 */
export async function openGeoIp(opts: GeoIpOptions): Promise<GeoIp> {
  // Both are tried, so that the caller learns about each bad file, not only the one that failed first.
  const attempt = <T>(p: Promise<T> | undefined) => (p ?? Promise.resolve(undefined)).then((value) => ({ value }), (error: Error) => ({ error }));
  const [c, a] = await Promise.all([
    attempt(opts.cityDb ? loadReader<CityResponse>(opts.cityDb, 'city') : undefined),
    attempt(opts.asnDb ? loadReader<AsnResponse>(opts.asnDb, 'asn') : undefined),
  ]);
  const failures = [c, a].flatMap((r) => ('error' in r ? [r.error] : []));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
  const city = 'value' in c ? c.value : undefined;
  const asn = 'value' in a ? a.value : undefined;
  // Results by canonical address: a repeat skips both tree walks and the record decoding (maxmind's
  // own per-record cache would still parse the address twice and rebuild the result).
  const results = new LRUCache<string, GeoResult | typeof NONE>({ max: Math.max(1, opts.cacheEntries ?? 10_000) });
  const counts = { hits: 0, misses: 0 };

  function get<T extends CityResponse | AsnResponse>(r: Reader<T> | undefined, ip: string): T | null {
    if (!r) return null;
    try {
      return r.get(ip);
    } catch {
      return null;
    }
  }

  return {
    ready: true,
    databases: [city?.info, asn?.info].filter((i): i is GeoDatabaseInfo => i !== undefined),
    stats() {
      return { hits: counts.hits, misses: counts.misses, size: results.size };
    },
    lookup(ip: string | IpClass): GeoResult | null {
      const c = typeof ip === 'string' ? classifyIp(ip) : ip;
      if (!c) return null;
      const cached = results.get(c.address);
      if (cached !== undefined) {
        counts.hits++;
        return cached === NONE ? null : cached;
      }
      counts.misses++;
      const found = locate(c);
      results.set(c.address, found ?? NONE);
      return found;
    },
  };

  function locate(c: IpClass): GeoResult | null {
    const loc = get(city?.reader, c.address);
    const as = get(asn?.reader, c.address);
    if (!loc && !as) return null;
    const sub = loc?.subdivisions?.[0];
    const continentCode = loc?.continent?.code ?? null;
    return {
      ip: c.address,
      ipType: c.version === 4 ? 'IPV4' : 'IPV6',
      countryCode: loc?.country?.iso_code ?? null,
      countryName: en(loc?.country?.names),
      regionName: en(sub?.names),
      regionCode: sub?.iso_code ?? null,
      cityName: en(loc?.city?.names),
      continentCode,
      continentName: en(loc?.continent?.names) ?? (continentCode ? CONTINENT_NAMES[continentCode] ?? null : null),
      lat: loc?.location?.latitude ?? null,
      lng: loc?.location?.longitude ?? null,
      zipCode: loc?.postal?.code ?? null,
      timezone: loc?.location?.time_zone ?? null,
      isEU: loc?.country?.is_in_european_union === true,
      asn: as?.autonomous_system_number ?? null,
      asnOrganization: as?.autonomous_system_organization ?? null,
    };
  }
}
