// Builds data/ip/hosting-asns.txt: X4BNet/lists_vpn's data-centre ASN list (MIT), less the access networks it holds
// (src/domain/hosting-sources.ts's ACCESS_NETWORKS; docs/adr/0026-hosting-by-network-owner.md says why each is left out).
//
// Usage: node --import tsx scripts/build-hosting-asns.ts [--from=FILE] [--out=data/ip]
//   Without --from it downloads the list (make data's `ip` step); with --from it reads a copy, dated by its
//   modification day (the shipped snapshot: a copy of the repository at the commit named in data/ip/NOTICE).
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostingAsnsFromText } from '../src/adapters/ip-data/hosting-asns.js';
import { HOSTING_ASNS_URL, hostingAsnsText } from '../src/domain/hosting-sources.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const from = arg('from');
const out = arg('out') ?? 'data/ip';
const today = new Date().toISOString().slice(0, 10);

const text = from ? readFileSync(from, 'utf8') : await (await fetch(HOSTING_ASNS_URL)).text();
const date = from ? statSync(from).mtime.toISOString().slice(0, 10) : today;
const built = hostingAsnsText(text, { by: 'scripts/build-hosting-asns.ts', from: `${from ? 'a copy of ' : ''}${HOSTING_ASNS_URL}`, date, today });
const list = hostingAsnsFromText(built, from ?? HOSTING_ASNS_URL); // throws on a line it cannot read: nothing is written
writeFileSync(join(out, 'hosting-asns.txt'), built);
process.stderr.write(`build-hosting-asns: ${list.asns.length} ASNs (${list.entries} lines), dated ${date}\n`);
