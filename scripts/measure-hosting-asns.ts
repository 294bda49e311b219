// Precision and recall of isHosting (published ranges + hosting ASN list) over the GeoLite2 ASN database: the share of
// addresses of large residential and mobile networks that are flagged (false positives), and the share of addresses
// of hosting providers beyond the six clouds that are (recall). Figures: docs/adr/0026-hosting-by-network-owner.md.
//
// Usage: node --import tsx scripts/measure-hosting-asns.ts [GeoLite2-ASN.mmdb] [--per-asn=120] [--per-provider=400]
//   Walks every IPv4 network of the database and IPv6 2000::/3, samples addresses (fixed seed) of each network owner
//   uniformly (IPv4 by address, IPv6 by network), and asks the service's own lookup (createIpSecurity).
import { readFileSync } from 'node:fs';
import { Reader, type AsnResponse } from 'maxmind';
import { loadHostingAsns } from '../src/adapters/ip-data/hosting-asns.js';
import { createIpSecurity, loadHostingRanges, loadTorExits } from '../src/adapters/ip-data/ip-lists.js';
import { formatV4, formatV6, ipWords } from '../src/domain/ip-address.js';
import { classifyIp } from '../src/domain/ip-ranges.js';

/** Access networks: cable, DSL, fibre and mobile operators of 18 countries (ASN, operator, country). */
const ACCESS: Array<[number, string, string]> = [
  [7922, 'Comcast', 'US'], [20115, 'Charter', 'US'], [7018, 'AT&T', 'US'], [22394, 'Verizon Wireless', 'US'], [701, 'Verizon', 'US'],
  [21928, 'T-Mobile US', 'US'], [22773, 'Cox', 'US'], [3320, 'Deutsche Telekom', 'DE'], [3209, 'Vodafone', 'DE'], [6805, 'Telefonica', 'DE'],
  [8881, '1&1 Versatel', 'DE'], [2856, 'BT', 'GB'], [5089, 'Virgin Media', 'GB'], [5607, 'Sky', 'GB'], [25135, 'Vodafone', 'GB'],
  [3215, 'Orange', 'FR'], [12322, 'Free', 'FR'], [15557, 'SFR', 'FR'], [5410, 'Bouygues', 'FR'], [3352, 'Telefonica', 'ES'], [12479, 'Orange', 'ES'],
  [12430, 'Vodafone', 'ES'], [3269, 'TIM', 'IT'], [12874, 'Fastweb', 'IT'], [30722, 'Vodafone', 'IT'], [1267, 'WindTre', 'IT'], [1136, 'KPN', 'NL'],
  [33915, 'Ziggo', 'NL'], [5617, 'Orange', 'PL'], [12912, 'T-Mobile', 'PL'], [4713, 'NTT OCN', 'JP'], [2516, 'KDDI', 'JP'], [17676, 'SoftBank', 'JP'],
  [9605, 'NTT Docomo', 'JP'], [4766, 'KT', 'KR'], [9318, 'SK Broadband', 'KR'], [3786, 'LG U+', 'KR'], [55836, 'Reliance Jio', 'IN'],
  [24560, 'Bharti Airtel', 'IN'], [9829, 'BSNL', 'IN'], [28573, 'Claro', 'BR'], [18881, 'Vivo', 'BR'], [7738, 'Oi', 'BR'], [1221, 'Telstra', 'AU'],
  [4804, 'Optus', 'AU'], [7545, 'TPG', 'AU'], [812, 'Rogers', 'CA'], [577, 'Bell', 'CA'], [6327, 'Shaw', 'CA'], [5769, 'Videotron', 'CA'],
  [8151, 'Telmex', 'MX'], [9121, 'Turk Telekom', 'TR'], [3303, 'Swisscom', 'CH'], [8447, 'A1 Telekom', 'AT'],
];

/** Hosting providers beyond the six clouds of the published ranges, by the AS organisation GeoLite2 names. */
const PROVIDERS: Array<[string, RegExp]> = [
  ['Linode/Akamai Connected Cloud', /linode|akamai connected cloud/i], ['Vultr', /vultr|choopa|constant company/i], ['Hetzner', /hetzner/i], ['OVHcloud', /^ovh/i],
  ['Scaleway', /scaleway|^online s\.a\.s/i], ['Contabo', /contabo/i], ['Leaseweb', /leaseweb/i], ['IONOS', /ionos/i], ['Hostinger', /hostinger/i],
  ['netcup', /netcup/i], ['M247', /^m247/i], ['Alibaba Cloud', /alibaba/i], ['Tencent Cloud', /tencent/i], ['Kamatera', /kamatera/i], ['UpCloud', /upcloud/i],
  ['DreamHost', /new dream network|dreamhost/i], ['Hostwinds', /hostwinds/i], ['InterServer', /interserver/i], ['ColoCrossing/HostPapa', /colocrossing|hostpapa/i],
  ['GoDaddy', /godaddy|go daddy/i], ['Rackspace', /rackspace/i], ['Hivelocity', /hivelocity/i],
];

const arg = (n: string, d: number) => Number(process.argv.find((a) => a.startsWith(`--${n}=`))?.split('=')[1] ?? d);
const dbPath = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 'var/geoip/GeoLite2-ASN.mmdb';
const reader = new Reader<AsnResponse>(readFileSync(dbPath));

interface Net { first: bigint; bits: number }
interface Owner { org: string; v4: Net[]; v6: Net[]; v4Size: bigint }
const owners = new Map<number, Owner>();

const words = ipWords();
function text(v: 4 | 6, x: bigint): string {
  if (v === 4) return formatV4(Number(x));
  for (let w = 0; w < 4; w++) words[w] = Number((x >> BigInt(96 - 32 * w)) & 0xffffffffn);
  return formatV6(words);
}

/** Every network of [from, to) in the database, by its owner. */
function walk(v: 4 | 6, from: bigint, to: bigint): void {
  const width = v === 4 ? 32 : 128;
  for (let x = from; x < to; ) {
    const [rec, len] = reader.getWithPrefixLength(text(v, x));
    const size = 1n << BigInt(width - len);
    const first = (x / size) * size;
    if (rec?.autonomous_system_number !== undefined) {
      const asn = rec.autonomous_system_number;
      const o = owners.get(asn) ?? { org: rec.autonomous_system_organization ?? '', v4: [], v6: [], v4Size: 0n };
      owners.set(asn, o);
      (v === 4 ? o.v4 : o.v6).push({ first, bits: len });
      if (v === 4) o.v4Size += size;
    }
    x = first + size;
  }
}

/** mulberry32: a fixed sequence, so that a rerun samples the same addresses. */
let seed = 20261129;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const randomBig = (below: bigint) => {
  let r = 0n;
  for (let i = 0; i < 4; i++) r = (r << 32n) | BigInt(Math.floor(random() * 4294967296));
  return r % below;
};

/** n addresses of these owners: IPv4 uniform over their addresses, IPv6 uniform over their networks. */
function sample(of: Owner[], n: number): Array<{ ip: string; asn: number; org: string }> {
  const out: Array<{ ip: string; asn: number; org: string }> = [];
  const all4 = of.flatMap((o) => o.v4.map((net) => ({ net, o })));
  const total = all4.reduce((s, { net }) => s + (1n << BigInt(32 - net.bits)), 0n);
  for (let i = 0; i < n && total > 0n; i++) {
    let at = randomBig(total);
    for (const { net, o } of all4) {
      const size = 1n << BigInt(32 - net.bits);
      if (at < size) {
        out.push({ ip: text(4, net.first + at), asn: asnOf.get(o)!, org: o.org });
        break;
      }
      at -= size;
    }
  }
  const all6 = of.flatMap((o) => o.v6.map((net) => ({ net, o })));
  for (let i = 0; i < Math.ceil(n / 4) && all6.length > 0; i++) {
    const { net, o } = all6[Math.floor(random() * all6.length)];
    out.push({ ip: text(6, net.first + randomBig(1n << BigInt(128 - net.bits))), asn: asnOf.get(o)!, org: o.org });
  }
  return out;
}

const started = performance.now();
walk(4, 0n, 1n << 32n);
walk(6, 0x2000n << 112n, 0x2002n << 112n); // 2000::/3 less the 6to4 and Teredo aliases of the IPv4 tree
walk(6, 0x2003n << 112n, 0x4000n << 112n);
const asnOf = new Map([...owners].map(([asn, o]) => [o, asn]));
const walkMs = Math.round(performance.now() - started);

const security = createIpSecurity(
  await loadHostingRanges('data/ip/hosting-ranges.csv'),
  await loadTorExits('data/ip/tor-exits.txt'),
  await loadHostingAsns('data/ip/hosting-asns.txt'),
);
const flagged = (s: { ip: string; asn: number; org: string }) => security.lookup(classifyIp(s.ip)!, { asn: s.asn, asnOrganization: s.org }).isHosting === true;
const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(2)}%`;

const perAsn = arg('per-asn', 120);
let fp = 0;
let n = 0;
const fpRows: string[] = [];
for (const [asn, name, cc] of ACCESS) {
  const o = owners.get(asn);
  if (!o) {
    fpRows.push(`| AS${asn} | ${name} | ${cc} | not in the database | | |`);
    continue;
  }
  const got = sample([o], perAsn);
  const bad = got.filter(flagged);
  fp += bad.length;
  n += got.length;
  fpRows.push(`| AS${asn} | ${name} | ${cc} | ${got.length} | ${bad.length} | ${bad.slice(0, 2).map((b) => b.ip).join(' ')} |`);
}

const perProvider = arg('per-provider', 400);
let hit = 0;
let m = 0;
const recallRows: string[] = [];
for (const [name, org] of PROVIDERS) {
  const of = [...owners.values()].filter((o) => org.test(o.org));
  const got = sample(of, perProvider);
  const ok = got.filter(flagged).length;
  hit += ok;
  m += got.length;
  const missed = [...new Set(got.filter((g) => !flagged(g)).map((g) => `AS${g.asn}`))].slice(0, 4).join(' ');
  recallRows.push(`| ${name} | ${of.length} | ${got.length} | ${ok} | ${pct(ok, got.length)} | ${missed} |`);
}

console.log(`GeoLite2 ASN ${reader.metadata.buildEpoch.toISOString().slice(0, 10)}: ${owners.size} ASNs walked in ${walkMs} ms\n`);
console.log(`False positives: ${fp} of ${n} addresses of ${ACCESS.length} access networks in ${new Set(ACCESS.map((a) => a[2])).size} countries (${pct(fp, n)})\n`);
console.log('| ASN | operator | country | sampled | flagged | e.g. |\n|---|---|---|---|---|---|');
console.log(fpRows.join('\n'));
console.log(`\nRecall: ${hit} of ${m} addresses of ${PROVIDERS.length} hosting providers flagged (${pct(hit, m)})\n`);
console.log('| provider | ASNs (GeoLite2 organisation) | sampled | flagged | recall | ASNs missed (first 4) |\n|---|---|---|---|---|---|');
console.log(recallRows.join('\n'));
