// Builds data/ip/hosting-ranges.csv and data/ip/tor-exits.txt from the providers' and the Tor Project's own lists.
//
// Usage: node --import tsx scripts/build-ip-datasets.ts [--from=DIR] [--out=data/ip]
//   Without --from it downloads each source below (make data's `ip` step). With --from it reads DIR/<id>.json or
//   DIR/<id>.txt instead (the publisher's format, or plain lines whose first comma-separated field is a CIDR block)
//   and dates each by the date inside it, else by the file's modification day: how the shipped snapshot was built
//   (data/ip/NOTICE). Every provider must give at least one range, else nothing is written.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOSTING_SOURCES, hostingCsv, providerRanges, torExitsText, type HostingSource, type ProviderRanges } from '../src/domain/hosting-sources.js';
import { parseCidr } from '../src/domain/ip-address.js';

const TOR_URL = 'https://check.torproject.org/torbulkexitlist';

const args = process.argv.slice(2);
const from = args.find((a) => a.startsWith('--from='))?.slice(7);
const out = args.find((a) => a.startsWith('--out='))?.slice(6) ?? 'data/ip';
const today = new Date().toISOString().slice(0, 10);
const log = (msg: string) => process.stderr.write(`build-ip-datasets: ${msg}\n`);

/** The texts of a source (several files or URLs: one per family) with the modification day of the local ones. */
async function texts(id: string, urls: readonly string[], link?: HostingSource['link']): Promise<{ texts: string[]; where: string; mtime: string }> {
  if (from) {
    const files = readdirSync(from).filter((f) => f === `${id}.json` || f === `${id}.txt` || new RegExp(`^${id}\\.[a-z0-9-]+\\.txt$`).test(f));
    if (files.length === 0) throw new Error(`${id}: no ${id}.json or ${id}.txt in ${from}`);
    const mtime = files.map((f) => statSync(join(from, f)).mtime.toISOString().slice(0, 10)).sort()[0];
    return { texts: files.map((f) => readFileSync(join(from, f), 'utf8')), where: files.join(' '), mtime };
  }
  const get = async (u: string) => {
    const res = await fetch(u);
    if (!res.ok) throw new Error(`${id}: ${u} answered ${res.status}`);
    return res.text();
  };
  const got = await Promise.all(
    urls.map(async (u) => {
      const text = await get(u);
      const file = link?.(text);
      if (file === undefined || file === null) return text;
      return get(file);
    }),
  );
  return { texts: got, where: urls.join(' '), mtime: today };
}

const providers: ProviderRanges[] = [];
for (const s of HOSTING_SOURCES) {
  const got = await texts(s.id, s.urls, s.link);
  const ranges = providerRanges(s, got.texts, got.mtime, got.where);
  for (const c of ranges.skipped) log(`${s.id}: skipped ${c}`);
  providers.push(ranges);
  log(`${s.provider}: ${ranges.cidrs.length} ranges, ${ranges.date}`);
}
writeFileSync(join(out, 'hosting-ranges.csv'), hostingCsv(providers, today, 'scripts/build-ip-datasets.ts'));

const tor = await texts('tor-exits', [TOR_URL]);
const lines = tor.texts.flatMap((t) => t.split('\n').map((l) => l.replace(/#.*/, '').trim()));
const exits = [...new Set(lines)].filter((c) => c !== '' && parseCidr(c) !== null);
if (exits.length === 0) throw new Error(`tor: no address in ${tor.where}`);
writeFileSync(join(out, 'tor-exits.txt'), torExitsText(exits, tor.mtime, `Tor exit addresses, built by scripts/build-ip-datasets.ts on ${today} from ${tor.where}; data/ip/NOTICE.`));
log(`Tor: ${exits.length} exit addresses, ${tor.mtime}`);
