// The service's environment in the bench: local fixtures as upstreams, GeoLite2 (or MaxMind test) databases, high limits.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GEOIP_TEST_ASN_DB, GEOIP_TEST_CITY_DB } from '../test/fixtures/paths.js';
import type { Upstreams } from '../test/faults/fixtures.js';
import { ROOT } from './processes.js';

export interface GeoDatabases {
  city: string;
  asn: string;
  /** GeoLite2 from var/geoip (make geoip), or false: MaxMind's test databases from test/fixtures/geoip. */
  real: boolean;
}

/** GeoLite2 where `make geoip` fetched it, else (or with `test`) MaxMind's test databases. */
export function geoDatabases(test = false): GeoDatabases {
  if (test) return { city: GEOIP_TEST_CITY_DB, asn: GEOIP_TEST_ASN_DB, real: false };
  const dir = join(ROOT, 'var/geoip');
  const city = ['GeoLite2-City.mmdb', 'GeoLite2-City.mmdb.gz'].map((f) => join(dir, f)).find(existsSync);
  const asn = join(dir, 'GeoLite2-ASN.mmdb');
  if (city && existsSync(asn)) return { city, asn, real: true };
  return { city: GEOIP_TEST_CITY_DB, asn: GEOIP_TEST_ASN_DB, real: false };
}

/** Limits far above what a bench run can use: they are counted, never hit. */
export const HIGH_LIMITS = { RATE_LIMIT_PER_MINUTE: '1000000000', QUOTA_PER_DAY: '1000000000', QUOTA_PER_MONTH: '1000000000' };

/** The fixtures' own environment for their upstreams (DNS, range API, TLS on loopback), the bench's data and limits. */
export function serviceEnv(fixtures: Upstreams, dataDir: string, geo: GeoDatabases = geoDatabases()): Record<string, string> {
  return {
    ...fixtures.env,
    DATA_DIR: dataDir,
    GEOIP_CITY_DB: geo.city,
    GEOIP_ASN_DB: geo.asn,
    ...HIGH_LIMITS,
    LOG_LEVEL: 'info',
    WORKERS: '1',
  };
}
