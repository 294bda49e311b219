// Writes the slim City database the service prefers (src/adapters/geoip/slim-city.ts): what it returns, no more.
// Usage: node --import tsx scripts/slim-geoip.ts SOURCE.mmdb DEST.mmdb   (scripts/fetch-geoip.sh runs it)
// Before the file is put in place, 200,000 addresses (random IPv4 and IPv6, seeded) must get the same answer from
// geoip-reader on both files: a slim file that differs is never installed.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { openGeoIp } from '../src/adapters/geoip/geoip-reader.js';
import { slimCityDatabase } from '../src/adapters/geoip/slim-city.js';

const [source, dest] = process.argv.slice(2);
if (!source || !dest) throw new Error('usage: slim-geoip.ts SOURCE.mmdb DEST.mmdb');
const t0 = Date.now();
const slim = slimCityDatabase(readFileSync(source));
const partial = `${dest}.partial.${process.pid}`;
writeFileSync(partial, slim, { mode: 0o600 });

let seed = 58;
const rnd = (n: number) => Math.floor(((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * n);
const address = (i: number) =>
  i % 2 ? [0, 0, 0, 0].map(() => rnd(256)).join('.') : [0x2000 + rnd(0x1000), ...Array.from({ length: 7 }, () => rnd(65536))].map((g) => g.toString(16)).join(':');
const [full, cut] = await Promise.all([openGeoIp({ cityDb: source, cacheEntries: 1 }), openGeoIp({ cityDb: partial, cacheEntries: 1 })]);
for (let i = 0; i < 200_000; i++) {
  const ip = address(i);
  if (!isDeepStrictEqual(full.lookup(ip), cut.lookup(ip))) {
    rmSync(partial);
    throw new Error(`slim-geoip: ${ip} answers differently from ${source}: slim file not written`);
  }
}
// Written beside and renamed: a service starting meanwhile reads the old file or the new one, never half of one.
renameSync(partial, dest);
process.stderr.write(`slim-geoip: ${dest} (${(slim.length / 2 ** 20).toFixed(1)} MB, ${((Date.now() - t0) / 1000).toFixed(1)} s, 200,000 addresses checked)\n`);
