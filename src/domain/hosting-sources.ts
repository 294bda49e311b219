// The hosting providers' published address lists (each publisher's own format) and the one CSV the service reads,
// `cidr,provider` with `# date:` (docs/data-sources.md): shared by `make data` (scripts/build-ip-datasets.ts) and the
// service's own refresh (DATA_REFRESH, src/adapters/refresh/).
import { parseCidr } from './ip-address.js';

export interface HostingSource {
  id: string;
  provider: string;
  /** The setting that overrides the URLs (src/config.ts): one URL per family where the publisher splits them. */
  env: string;
  urls: readonly string[];
  /**
   * For a publisher whose file name changes (Azure's weekly ServiceTags_Public_YYYYMMDD.json): the file's URL as
   * read from the page the configured URL serves, or null when the text is already the file.
   */
  link?: (page: string) => string | null;
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

export const HOSTING_SOURCES: readonly HostingSource[] = Object.freeze([
  {
    id: 'aws',
    provider: 'Amazon Web Services',
    env: 'AWS_RANGES_URL',
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
    env: 'GOOGLE_CLOUD_RANGES_URL',
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
    env: 'AZURE_RANGES_URL',
    urls: ['https://www.microsoft.com/en-us/download/details.aspx?id=56519'],
    link: (page) => (jsonOr(page) !== null ? null : (/https:\/\/download\.microsoft\.com\/[^"'\s]*ServiceTags_Public_\d{8}\.json/.exec(page)?.[0] ?? null)),
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
    env: 'ORACLE_RANGES_URL',
    urls: ['https://docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json'],
    parse(text) {
      const j = jsonOr<{ last_updated_timestamp?: string; regions?: { cidrs?: { cidr: string }[] }[] }>(text);
      if (!j) return plain(text);
      return { cidrs: (j.regions ?? []).flatMap((r) => (r.cidrs ?? []).map((c) => c.cidr)), date: day(j.last_updated_timestamp) };
    },
  },
  { id: 'cloudflare', provider: 'Cloudflare', env: 'CLOUDFLARE_RANGES_URL', urls: ['https://www.cloudflare.com/ips-v4/', 'https://www.cloudflare.com/ips-v6/'], parse: plain },
  { id: 'digitalocean', provider: 'DigitalOcean', env: 'DIGITALOCEAN_RANGES_URL', urls: ['https://digitalocean.com/geo/google.csv'], parse: plain },
]);

/** One provider's ranges as read: the valid CIDR blocks (deduplicated), those skipped, and the date. */
export interface ProviderRanges {
  provider: string;
  cidrs: string[];
  skipped: string[];
  date: string;
  /** Where they came from (URLs or file names), for the CSV's comment line. */
  from: string;
}

/** The publisher's texts of one source (one per URL) as ranges; `fallbackDate` when the files name no date. */
export function providerRanges(source: HostingSource, texts: readonly string[], fallbackDate: string, from: string): ProviderRanges {
  const parsed = texts.map((t) => source.parse(t));
  const all = [...new Set(parsed.flatMap((p) => p.cidrs))];
  const cidrs = all.filter((c) => parseCidr(c) !== null);
  const skipped = all.filter((c) => parseCidr(c) === null);
  if (cidrs.length === 0) throw new Error(`${source.id}: no range in ${from}`);
  return { provider: source.provider, cidrs, skipped, date: parsed.map((p) => p.date).find((d) => d !== null) ?? fallbackDate, from };
}

/** The CSV the service reads: its `# date:` line is the oldest provider's date. */
export function hostingCsv(providers: readonly ProviderRanges[], builtOn: string, builtBy: string): string {
  const oldest = providers.map((p) => p.date).sort()[0];
  return [
    `# Hosting-provider address ranges, built by ${builtBy} on ${builtOn}; sources and licences: data/ip/NOTICE.`,
    `# date: ${oldest}`,
    ...providers.map((p) => `# ${p.provider}: ${p.cidrs.length} ranges, dated ${p.date}, from ${p.from}`),
    'cidr,provider',
    ...providers.flatMap((p) => p.cidrs.map((c) => `${c},${p.provider}`)),
    '',
  ].join('\n');
}

/** The Tor list the service reads: one address or block per line under a `# date:` line. */
export function torExitsText(exits: readonly string[], date: string, header: string): string {
  return [`# ${header}`, `# date: ${date}`, ...exits, ''].join('\n');
}

/** X4BNet/lists_vpn's data-centre ASN list (MIT): make data's `ip` step and DATA_REFRESH (HOSTING_ASN_URL). */
export const HOSTING_ASNS_URL = 'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/input/datacenter/ASN.txt';

/**
 * Listed, but networks of people at home or on the move (measured with scripts/measure-hosting-asns.ts and read
 * from the operators' own pages, ADR 0026): flagging them would call their customers "hosting".
 */
const ACCESS_NETWORKS: ReadonlyMap<number, string> = new Map([
  [7850, 'CityLink Fiber: residential fibre ISP (US)'],
  [36290, 'The Cable of St. Kitts: cable ISP (KN)'],
  [394330, 'LTD Broadband: rural residential ISP (US)'],
]);

/** The service's hosting-asns.txt from X4BNet's list: its `AS` lines less the access networks, under a dated header. */
export function hostingAsnsText(list: string, o: { by: string; from: string; date: string; today: string }): string {
  const kept = list.split('\n').filter((line) => {
    const asn = /^\s*AS(\d+)/i.exec(line);
    return asn !== null && !ACCESS_NETWORKS.has(Number(asn[1]));
  });
  return [
    `# Hosting, data-centre and cloud networks by ASN, built by ${o.by} on ${o.today} from ${o.from}`,
    `# (MIT, X4B); ${ACCESS_NETWORKS.size} access networks left out: ${[...ACCESS_NETWORKS.keys()].map((a) => `AS${a}`).join(', ')}. data/ip/NOTICE.`,
    `# date: ${o.date}`,
    ...kept.map((l) => l.trimEnd()),
    '',
  ].join('\n');
}
