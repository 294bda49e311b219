// Memory and load time of the hosting and Tor tables: RSS and heap before and after loading both (issue #47's budget:
// under 30 MB RSS together), then of the hosting ASN list on top (issue #57's budget: under 10 MB RSS).
// Usage: node --expose-gc --import tsx scripts/measure-ip-tables.ts [hosting file] [tor file] [hosting ASN file]
import { loadHostingAsns } from '../src/adapters/ip-data/hosting-asns.js';
import { createIpSecurity, loadHostingRanges, loadTorExits } from '../src/adapters/ip-data/ip-lists.js';
import { classifyIp } from '../src/domain/ip-ranges.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
const settle = () => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage();
};
const before = settle();
const started = performance.now();
const hosting = await loadHostingRanges(process.argv[2] ?? 'data/ip/hosting-ranges.csv');
const tor = await loadTorExits(process.argv[3] ?? 'data/ip/tor-exits.txt');
const loadedMs = performance.now() - started;
const after = settle();
const asns = await loadHostingAsns(process.argv[4] ?? 'data/ip/hosting-asns.txt');
const security = createIpSecurity(hosting, tor, asns);
const afterAsns = settle();
const probes = ['3.5.140.1', '20.33.0.1', '8.8.8.8', '2600:1f00::1', '2001:db8::1'].map((a) => classifyIp(a)!);
let n = 0;
const t = performance.now();
const as = [{ asn: 16509, asnOrganization: 'Amazon.com, Inc.' }, { asn: 24940, asnOrganization: 'Hetzner Online GmbH' }, { asn: 15169, asnOrganization: 'Google LLC' }, null, { asn: 3320, asnOrganization: 'Deutsche Telekom AG' }];
for (let i = 0; i < 1_000_000; i++) if (security.lookup(probes[i % probes.length], as[i % as.length]).isHosting) n++;
const perLookupNs = ((performance.now() - t) / 1_000_000) * 1e6;
console.log(
  JSON.stringify({
    hostingEntries: hosting.entries,
    hostingRanges: hosting.table.size,
    torEntries: tor.entries,
    torRanges: tor.table.size,
    loadMs: Math.round(loadedMs),
    rssAdded: mb(after.rss - before.rss),
    heapAdded: mb(after.heapUsed - before.heapUsed),
    externalAdded: mb(after.external + after.arrayBuffers - before.external - before.arrayBuffers),
    hostingAsns: asns.asns.length,
    asnRssAdded: mb(afterAsns.rss - after.rss),
    asnHeapAdded: mb(afterAsns.heapUsed - after.heapUsed),
    perLookupNs: Math.round(perLookupNs),
    hits: n,
  }),
);
