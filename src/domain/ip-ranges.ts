// IP address classification by the IANA IPv4/IPv6 Special-Purpose Address Registries (RFC 6890); canonical text RFC 5952.
import { formatV4, formatV6, ipWords, isV4Mapped, parseCidr, parseIpInto, type IpRange, type IpWords } from './ip-address.js';
import { buildRangeTable } from './ip-range-table.js';

export interface IpClass {
  version: 4 | 6;
  /** Canonical text: dotted quad, or RFC 5952 IPv6; an IPv4-mapped IPv6 address becomes its IPv4 address. */
  address: string;
  /** Globally routable unicast: worth geolocating and allowed as an outbound target. */
  public: boolean;
  /** Name of the special-purpose range when not public (e.g. 'loopback', 'private'). */
  range?: string;
}

/** name null: a globally reachable block inside a special-purpose range (the registries' "Globally Reachable: True"). */
type Entry = [cidr: string, name: string | null];

// The narrowest range holding an address names it (ip-range-table.ts), whatever the order here.
const V4_RANGES: Entry[] = [
  ['192.0.0.9/32', null], // Port Control Protocol anycast (RFC 7723)
  ['192.0.0.10/32', null], // TURN anycast (RFC 8155)
  ['0.0.0.0/32', 'unspecified'],
  ['255.255.255.255/32', 'broadcast'],
  ['0.0.0.0/8', 'this-network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'ietf-protocol-assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4-relay-anycast'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
];

// IPv6 outside these and outside 2000::/3 (global unicast) is 'reserved'. NAT64 (64:ff9b::/96) and
// 6to4 (2002::/16) take the class of the IPv4 address they embed; IPv4-mapped becomes the IPv4 address.
const V6_RANGES: Entry[] = [
  ['::/0', 'reserved'],
  ['2000::/3', null], // global unicast
  ['2001:1::1/128', null], // Port Control Protocol anycast (RFC 7723)
  ['2001:1::2/128', null], // TURN anycast (RFC 8155)
  ['2001:1::3/128', null], // DNS-SD Service Registration Protocol anycast (RFC 9665)
  ['2001:3::/32', null], // AMT (RFC 7450)
  ['2001:4:112::/48', null], // AS112-v6 (RFC 7535)
  ['2001:20::/28', null], // ORCHIDv2 (RFC 7343)
  ['2001:30::/28', null], // Drone Remote ID DETs (RFC 9374)
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'nat64-local-use'],
  ['100::/64', 'discard-only'],
  ['2001::/32', 'teredo'],
  ['2001::/23', 'ietf-protocol-assignments'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'srv6-sid'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

/** Label of the registries' globally reachable blocks in the table. */
const GLOBAL = '';

/** One range table for both registries, built once at start-up. */
const SPECIAL = buildRangeTable(
  [...V4_RANGES, ...V6_RANGES].map(([cidr, name]) => ({ ...(parseCidr(cidr) as IpRange), label: name ?? GLOBAL })),
);

/** The special-purpose range name of a parsed address, or null when it is globally reachable. */
function specialRange(w: IpWords, version: 4 | 6): string | null {
  const label = SPECIAL.lookupWords(w, version);
  const name = label < 0 ? GLOBAL : SPECIAL.labels[label];
  return name === GLOBAL ? null : name;
}

const classOf = (version: 4 | 6, address: string, range: string | null): IpClass =>
  range === null ? { version, address, public: true } : { version, address, public: false, range };

const WORDS = ipWords();
const INNER = ipWords();

/** NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses take the class of the IPv4 address they embed (or -1: neither). */
function embeddedV4(w: IpWords): number {
  if (w[0] === 0x0064ff9b && w[1] === 0 && w[2] === 0) return w[3];
  if (w[0] >>> 16 === 0x2002) return ((w[0] & 0xffff) * 65536 + (w[1] >>> 16)) >>> 0;
  return -1;
}

function classifyV6(w: IpWords): IpClass {
  const address = formatV6(w);
  const v4 = embeddedV4(w);
  if (v4 < 0) return classOf(6, address, specialRange(w, 6));
  INNER[3] = v4;
  const inner = specialRange(INNER, 4);
  return classOf(6, address, inner === null ? null : `${w[0] >>> 16 === 0x2002 ? '6to4' : 'nat64'} (${inner})`);
}

/** Classify a textual IP address (strict form of ip-address.ts; zone id allowed and dropped); null when it is not one. */
export function classifyIp(ip: string): IpClass | null {
  const version = parseIpInto(ip, WORDS);
  if (version === 0) return null;
  if (version === 4 || isV4Mapped(WORDS)) return classOf(4, formatV4(WORDS[3]), specialRange(WORDS, 4));
  return classifyV6(WORDS);
}

/** Canonical text of an IP address (IPv4-mapped IPv6 → IPv4), or null when the input is not one. */
export function parseIp(input: string): string | null {
  return classifyIp(input)?.address ?? null;
}

/**
 * RFC 5952 text of an IPv6 address (an AAAA record's value), IPv4-mapped ones as `::ffff:a.b.c.d` (section 5);
 * null when the input is not IPv6.
 */
export function canonicalIpv6(input: string): string | null {
  if (parseIpInto(input, WORDS) !== 6) return null;
  return isV4Mapped(WORDS) ? `::ffff:${formatV4(WORDS[3])}` : formatV6(WORDS);
}

/** True when the text is a plain dotted quad or IPv6 literal in the strict form (not a legacy numeric form). */
export function isStandardIp(input: string): boolean {
  return parseIpInto(input, WORDS) !== 0;
}
