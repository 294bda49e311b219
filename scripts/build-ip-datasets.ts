// Builds data/ip/hosting-ranges.csv and data/ip/tor-exits.txt from the providers' and the Tor Project's own lists.
//
// Usage: node --import tsx scripts/build-ip-datasets.ts [--from=DIR] [--out=data/ip]
//   Without --from it downloads each source below (make data's `ip` step). With --from it reads DIR/<id>.json or
//   DIR/<id>.txt instead (the publisher's format, or plain lines whose first comma-separated field is a CIDR block)
//   and dates each by the date inside it, else by the file's modification day: how the shipped snapshot was built
//   (data/ip/NOTICE). Every provider must give at least one range, else nothing is written.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCidr } from '../src/domain/ip-address.js';

interface Source {
  id: string;
  provider: string;
  urls: string[] | (() => Promise<string[]>);
  /** The publisher's file as CIDR blocks and its date when it names one. */
  parse(text: string): { cidrs: string[]; date: string | null };
}

const jsonOr = <T>(text: string): T | null => {
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
};
/** Plain lists (Cloudflare's ips-v4/ips-v6, DigitalOcean's RFC 8805 geofeed, one-CIDR-per-line copies). */
const plain = (text: string) => ({
  cidrs: text
    .split('\n')
    .map((l) => l.replace(/#.*/, '').split(',')[0].trim())
    .filter((l) => l !== ''),
  date: null,
});
const day = (s: string | undefined) => (s && /^\d{4}-\d{2}-\d{2}/.test(s) ? s.slice(0, 10) : null);

const SOURCES: Source[] = [
  {
    id: 'aws',
    provider: 'Amazon Web Services',
    urls: ['https://ip-ranges.amazonaws.com/ip-ranges.json'],
    parse(text) {
      const j = jsonOr<{ createDate?: string; prefixes?: { ip_prefix: string }[]; ipv6_prefixes?: { ipv6_prefix: string }[] }>(text);
      if (!j) return plain(text);
      return { cidrs: [...(j.prefixes ?? []).map((p) => p.ip_prefix), ...(j.ipv6_prefixes ?? []).map((p) => p.ipv6_prefix)], date: day(j.createDate) };
    },
  },
  {
    id: 'google-cloud',
    provider: 'Google Cloud',
    urls: ['https://www.gstatic.com/ipranges/cloud.json'],
    parse(text) {
      const j = jsonOr<{ creationTime?: string; prefixes?: { ipv4Prefix?: string; ipv6Prefix?: string }[] }>(text);
      if (!j) return plain(text);
      return { cidrs: (j.prefixes ?? []).flatMap((p) => [p.ipv4Prefix, p.ipv6Prefix].filter((c): c is string => !!c)), date: day(j.creationTime) };
    },
  },
  {
    id: 'azure',
    provider: 'Microsoft Azure',
    // The weekly file's name changes (ServiceTags_Public_YYYYMMDD.json): its link is read from the download page.
    async urls() {
      const page = await (await fetch('https://www.microsoft.com/en-us/download/details.aspx?id=56519')).text();
      const link = /https:\/\/download\.microsoft\.com\/[^"']*ServiceTags_Public_\d{8}\.json/.exec(page)?.[0];
      if (!link) throw new Error('azure: no ServiceTags_Public link on the download page');
      return [link];
    },
    parse(text) {
      type Tag = { name?: string; properties?: { addressPrefixes?: string[] } };
      const j = jsonOr<{ values?: Tag[] } & Tag>(text);
      if (!j) return plain(text);
      // The AzureCloud tag is every public Azure address; a file of that tag alone is read the same way.
      const tag = j.values ? j.values.find((v) => v.name === 'AzureCloud') : j;
      return { cidrs: tag?.properties?.addressPrefixes ?? [], date: null };
    },
  },
  {
    id: 'oracle',
    provider: 'Oracle Cloud',
    urls: ['https://docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json'],
    parse(text) {
      const j = jsonOr<{ last_updated_timestamp?: string; regions?: { cidrs?: { cidr: string }[] }[] }>(text);
      if (!j) return plain(text);
      return { cidrs: (j.regions ?? []).flatMap((r) => (r.cidrs ?? []).map((c) => c.cidr)), date: day(j.last_updated_timestamp) };
    },
  },
  { id: 'cloudflare', provider: 'Cloudflare', urls: ['https://www.cloudflare.com/ips-v4/', 'https://www.cloudflare.com/ips-v6/'], parse: plain },
  { id: 'digitalocean', provider: 'DigitalOcean', urls: ['https://digitalocean.com/geo/google.csv'], parse: plain },
];
const TOR_URL = 'https://check.torproject.org/torbulkexitlist';

const args = process.argv.slice(2);
const from = args.find((a) => a.startsWith('--from='))?.slice(7);
const out = args.find((a) => a.startsWith('--out='))?.slice(6) ?? 'data/ip';
const today = new Date().toISOString().slice(0, 10);
const log = (msg: string) => process.stderr.write(`build-ip-datasets: ${msg}\n`);

/** The texts of a source (several files or URLs: one per family) with the modification day of the local ones. */
async function texts(id: string, urls: Source['urls']): Promise<{ texts: string[]; where: string; mtime: string }> {
  if (from) {
    const files = readdirSync(from).filter((f) => f === `${id}.json` || f === `${id}.txt` || new RegExp(`^${id}\\.[a-z0-9-]+\\.txt$`).test(f));
    if (files.length === 0) throw new Error(`${id}: no ${id}.json or ${id}.txt in ${from}`);
    const mtime = files.map((f) => statSync(join(from, f)).mtime.toISOString().slice(0, 10)).sort()[0];
    return { texts: files.map((f) => readFileSync(join(from, f), 'utf8')), where: files.join(" "), mtime };
  }
  const list = typeof urls === 'function' ? await urls() : urls;
  const got = await Promise.all(
    list.map(async (u) => {
      const res = await fetch(u);
      if (!res.ok) throw new Error(`${id}: ${u} answered ${res.status}`);
      return res.text();
    }),
  );
  return { texts: got, where: list.join(' '), mtime: today };
}

const rows: string[] = [];
const header: string[] = [];
const dates: string[] = [];
for (const s of SOURCES) {
  const got = await texts(s.id, s.urls);
  const parsed = got.texts.map((t) => s.parse(t));
  const cidrs = [...new Set(parsed.flatMap((p) => p.cidrs))].filter((c) => {
    const ok = parseCidr(c) !== null;
    if (!ok) log(`${s.id}: skipped ${c}`);
    return ok;
  });
  if (cidrs.length === 0) throw new Error(`${s.id}: no range in ${got.where}`);
  const date = parsed.map((p) => p.date).find((d) => d !== null) ?? got.mtime;
  dates.push(date);
  header.push(`# ${s.provider}: ${cidrs.length} ranges, dated ${date}, from ${got.where}`);
  for (const c of cidrs) rows.push(`${c},${s.provider}`);
  log(`${s.provider}: ${cidrs.length} ranges, ${date}`);
}
const oldest = dates.sort()[0];
writeFileSync(
  join(out, 'hosting-ranges.csv'),
  [`# Hosting-provider address ranges, built by scripts/build-ip-datasets.ts on ${today}; sources and licences: data/ip/NOTICE.`, `# date: ${oldest}`, ...header, 'cidr,provider', ...rows, ''].join('\n'),
);

const tor = await texts('tor-exits', [TOR_URL]);
const exits = [...new Set(tor.texts.flatMap((t) => plain(t).cidrs))].filter((c) => parseCidr(c) !== null);
if (exits.length === 0) throw new Error(`tor: no address in ${tor.where}`);
writeFileSync(
  join(out, 'tor-exits.txt'),
  [`# Tor exit addresses, built by scripts/build-ip-datasets.ts on ${today} from ${tor.where}; data/ip/NOTICE.`, `# date: ${tor.mtime}`, ...exits, ''].join('\n'),
);
log(`Tor: ${exits.length} exit addresses, ${tor.mtime}`);
