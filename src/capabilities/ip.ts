// IP geolocation with hosting and Tor flags (openapi.yaml lookupIp, lookupOwnIp): the GeoIP databases, loaded in the
// background (~0.7 s for GeoLite2; /readyz and the IP endpoints answer 503 until then) unless GEOIP_CITY_DB or
// GEOIP_ASN_DB names one (then awaited: a bad one stops the boot naming it), and the hosting, hosting ASN and Tor lists.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Dataset } from '../adapters/files/dataset.js';
import type { DatasetCatalogue } from '../adapters/files/datasets.js';
import { GeoDatabaseError, openGeoIp, UNAVAILABLE_GEOIP, type GeoIp } from '../adapters/geoip/geoip-reader.js';
import { loadHostingAsns } from '../adapters/ip-data/hosting-asns.js';
import { createIpSecurity, loadHostingRanges, loadTorExits, type LoadedRanges } from '../adapters/ip-data/ip-lists.js';
import type { Config } from '../config.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../http/logging.js';
import { createIpOperations } from '../operations/network.js';
import { loadRangesOffLoop } from '../adapters/refresh/lists.js';
import { defineCapability } from './capability.js';
import { listFile, shippedLists, type ListName } from './shared/refresh.js';

type GeoConfig = Pick<Config, 'dataDir' | 'geoipCityDb' | 'geoipAsnDb'>;
type GeoPaths = { cityDb: string; asnDb: string };

/**
 * The configured GeoIP databases, or the bundled GeoLite2 ones under DATA_DIR/geoip (newest City first), the City one
 * as its slim derivative (scripts/slim-geoip.ts: 20 MB less held in memory) unless that is older than its source.
 */
async function geoPaths(config: GeoConfig): Promise<GeoPaths> {
  const dir = join(config.dataDir, 'geoip');
  const modified = (p: string) => stat(p).then((s) => s.mtimeMs, () => null);
  const latest = join(dir, 'GeoLite2-City.latest.mmdb');
  const source = (await modified(latest)) !== null ? latest : join(dir, 'GeoLite2-City.mmdb');
  const slim = join(dir, 'GeoLite2-City.slim.mmdb');
  const bundledCity = ((await modified(slim)) ?? -1) >= ((await modified(source)) ?? Infinity) ? slim : source;
  return { cityDb: config.geoipCityDb ?? bundledCity, asnDb: config.geoipAsnDb ?? join(dir, 'GeoLite2-ASN.mmdb') };
}

const openAt = async (config: GeoConfig) => {
  const paths = await geoPaths(config);
  return { paths, geo: await openGeoIp(paths) };
};

/** At start: a database named in the environment that fails is a configuration error, whatever failed beside it. */
function startFailure(err: unknown, config: GeoConfig, logger: Logger): GeoIp {
  const failures = err instanceof AggregateError ? (err.errors as unknown[]) : [err];
  for (const f of failures) {
    if (!(f instanceof GeoDatabaseError)) continue;
    const variable = f.kind === 'city' ? 'GEOIP_CITY_DB' : 'GEOIP_ASN_DB';
    if ((f.kind === 'city' ? config.geoipCityDb : config.geoipAsnDb) !== null) throw new ConfigError(variable, f.message);
  }
  logger.error({ err: String(err) }, 'GeoIP databases could not be opened: IP endpoints answer 503 (run make geoip or set GEOIP_CITY_DB/GEOIP_ASN_DB)');
  return UNAVAILABLE_GEOIP;
}

/**
 * A hosting, hosting ASN or Tor list, dated by its own `# date:` line (else the file's modification day), read from its
 * saved download under DATA_REFRESH=on (capabilities/shared/refresh.ts) once there is one. `load` is told whether this
 * is the first read: the start-up parses on the event loop; a range list's reload (SIGHUP or a refresh) parses and
 * builds its table in a worker thread.
 */
function ipList<T extends { date: string }>(name: ListName, variable: string, file: () => Promise<string>, load: (path: string, first: boolean) => Promise<T>, catalogue: DatasetCatalogue) {
  let path: string | null = null;
  const read = async () => {
    const first = path === null;
    path = await file();
    const value = await load(path, first);
    return { value, date: value.date };
  };
  return new Dataset<T>({ name, variable, files: () => [path ?? name], read }, catalogue);
}

export const ip = defineCapability({
  name: 'ip',
  config: ['dataDir', 'geoipCityDb', 'geoipAsnDb', 'hostingRangesFile', 'hostingAsnFile', 'torExitFile', 'trustProxy', 'dataRefresh'],
  // The GeoIP files (~55 MB for GeoLite2 with the slim City file) are read from the very start, so that the reads overlap the start-up's CPU
  // work (marked handled here: a failure is reported by start, not as an unhandled rejection).
  begin(config) {
    const opening = openAt(config);
    opening.catch(() => undefined);
    return opening;
  },
  async start({ config, catalogue, logger, metrics }, opening) {
    let early: typeof opening | null = opening;
    let paths: GeoPaths | null = null;
    const read = async () => {
      const next = early ?? openAt(config);
      early = null;
      const opened = await next;
      paths = opened.paths;
      // Dated by the older of the two databases' build dates.
      return { value: opened.geo, date: opened.geo.databases.map((d) => d.buildDate.slice(0, 10)).sort()[0] };
    };
    const geolite2 = new Dataset<GeoIp>({ name: 'geolite2', files: () => (paths ? Object.values(paths) : ['the GeoIP databases']), read }, catalogue);
    metrics.addCache('geoip', () => geolite2.current?.stats() ?? { hits: 0, misses: 0, size: 0 });
    const opened = geolite2.load().then(
      (g) => logger.info({ databases: g.databases }, 'GeoIP databases open'),
      (err: unknown) => geolite2.replace(startFailure(err, config, logger)),
    );
    if (config.geoipCityDb !== null || config.geoipAsnDb !== null) await opened;

    const shipped = shippedLists(config);
    const ranges = (kind: 'hosting' | 'tor', atStart: (path: string) => Promise<LoadedRanges>) => (path: string, first: boolean) => (first ? atStart(path) : loadRangesOffLoop(kind, path));
    const hosting = ipList('ip-hosting', 'HOSTING_RANGES_FILE', () => listFile(config, 'ip-hosting', shipped.hosting), ranges('hosting', loadHostingRanges), catalogue);
    const tor = ipList('ip-tor-exits', 'TOR_EXIT_FILE', () => listFile(config, 'ip-tor-exits', shipped.tor), ranges('tor', loadTorExits), catalogue);
    // Data-centre networks by owner (ADR 0026): matched with the ASN the GeoIP ASN database gives an address. A short
    // list (~900 lines, a few ms): read on the event loop.
    const asns = ipList('ip-hosting-asns', 'HOSTING_ASN_FILE', () => listFile(config, 'ip-hosting-asns', shipped.asns), loadHostingAsns, catalogue);
    const [h, t, a] = [await hosting.load(), await tor.load(), await asns.load()];
    let security = createIpSecurity(h, t, a);
    for (const list of [hosting, tor, asns]) list.onSwap(() => (security = createIpSecurity(hosting.value, tor.value, asns.value)));
    logger.info({ hosting: { entries: h.entries, ranges: h.table.size }, tor: { entries: t.entries, ranges: t.table.size }, asns: a.asns.length }, 'hosting, Tor and hosting ASN lists loaded');
    return {
      handlers: createIpOperations({ geo: () => geolite2.current ?? null, security: () => security, trustProxy: config.trustProxy }),
      datasets: [geolite2, hosting, tor, asns],
      readiness: { geoip: () => geolite2.current?.ready === true },
      loaded: opened.catch(() => undefined),
    };
  },
});
