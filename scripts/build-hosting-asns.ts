// Builds data/ip/hosting-asns.txt: X4BNet/lists_vpn's data-centre ASN list (MIT), less the access networks it holds
// (docs/adr/0026-hosting-by-network-owner.md says why each is left out).
//
// Usage: node --import tsx scripts/build-hosting-asns.ts [--from=FILE] [--out=data/ip]
//   Without --from it downloads the list (make data's `ip` step); with --from it reads a copy, dated by its
//   modification day (the shipped snapshot: a copy of the repository at the commit named in data/ip/NOTICE).
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostingAsnsFromText } from '../src/adapters/ip-data/hosting-asns.js';

const URL_ = 'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/input/datacenter/ASN.txt';

/**
 * Listed, but networks of people at home or on the move (measured with scripts/measure-hosting-asns.ts and read
 * from the operators' own pages): flagging them would call their customers "hosting".
 */
const ACCESS_NETWORKS = new Map<number, string>([
  [7850, 'CityLink Fiber: residential fibre ISP (US)'],
  [36290, 'The Cable of St. Kitts: cable ISP (KN)'],
  [394330, 'LTD Broadband: rural residential ISP (US)'],
]);

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const from = arg('from');
const out = arg('out') ?? 'data/ip';
const today = new Date().toISOString().slice(0, 10);

const text = from ? readFileSync(from, 'utf8') : await (await fetch(URL_)).text();
const date = from ? statSync(from).mtime.toISOString().slice(0, 10) : today;
const kept = text.split('\n').filter((line) => {
  const asn = /^\s*AS(\d+)/i.exec(line);
  return asn !== null && !ACCESS_NETWORKS.has(Number(asn[1]));
});
const list = hostingAsnsFromText(kept.join('\n'), from ?? URL_); // throws on a line it cannot read: nothing is written
writeFileSync(
  join(out, 'hosting-asns.txt'),
  [
    `# Hosting, data-centre and cloud networks by ASN, built by scripts/build-hosting-asns.ts on ${today} from ${from ? 'a copy of ' : ''}${URL_}`,
    `# (MIT, X4B); ${ACCESS_NETWORKS.size} access networks left out: ${[...ACCESS_NETWORKS.keys()].map((a) => `AS${a}`).join(', ')}. data/ip/NOTICE.`,
    `# date: ${date}`,
    ...kept.map((l) => l.trimEnd()),
    '',
  ].join('\n'),
);
process.stderr.write(`build-hosting-asns: ${list.asns.length} ASNs (${list.entries} lines), dated ${date}\n`);
