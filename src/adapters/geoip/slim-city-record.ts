// The part of a GeoIP2/GeoLite2 City record that geoip-reader's locate() reads: English names, codes, coordinates, time
// zone, postal code, EU flag and the first subdivision. Everything else (other languages, geoname ids, accuracy,
// registered and represented country, further subdivisions) is left out of the slim City database.
import type { CityResponse } from 'maxmind';
import type { MmdbValue } from './mmdb-data.js';

type Names = { names?: { en?: string } };
const en = (n: Names | undefined): Record<string, MmdbValue> => (n?.names?.en === undefined ? {} : { names: { en: n.names.en } });

/** Drops undefined fields and empty maps: geoip-reader reads every field through `?.`, so absent and empty agree. */
function compact(o: Record<string, MmdbValue | undefined>): Record<string, MmdbValue> | undefined {
  const kept = Object.entries(o).filter(([, v]) => v !== undefined && !(typeof v === 'object' && Object.keys(v).length === 0));
  return kept.length ? (Object.fromEntries(kept) as Record<string, MmdbValue>) : undefined;
}

/** The fields geoip-reader's locate() reads, and nothing else (a record itself is kept even when empty). */
export function slimCityRecord(r: CityResponse): Record<string, MmdbValue> {
  const sub = r.subdivisions?.[0];
  const subdivision = sub && compact({ iso_code: sub.iso_code, ...en(sub) });
  return (
    compact({
      city: compact(en(r.city)),
      continent: compact({ code: r.continent?.code, ...en(r.continent) }),
      country: compact({ iso_code: r.country?.iso_code, ...en(r.country), is_in_european_union: r.country?.is_in_european_union === true || undefined }),
      location: compact({ latitude: r.location?.latitude, longitude: r.location?.longitude, time_zone: r.location?.time_zone }),
      postal: compact({ code: r.postal?.code }),
      subdivisions: subdivision ? [subdivision] : undefined,
    }) ?? {}
  );
}
