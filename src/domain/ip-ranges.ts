// IP address parsing and special-purpose range classification (IANA IPv4/IPv6 Special-Purpose Address Registries, RFC 6890, RFC 5952).
import { isIP, isIPv4 } from 'node:net';

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
interface V4Range { base: number; span: number; name: string | null }
interface V6Range { base: bigint; bits: number; name: string | null }

// Most specific first: the first match wins.
const V4_RANGES: V4Range[] = ([
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
] as Array<[string, string | null]>).map(([cidr, name]) => {
  const [addr, bits] = cidr.split('/');
  return { base: v4ToInt(addr) as number, span: 2 ** (32 - Number(bits)), name };
});

// IPv6 outside these and outside 2000::/3 (global unicast) is 'reserved'. NAT64 (64:ff9b::/96) and
// 6to4 (2002::/16) take the class of the IPv4 address they embed; IPv4-mapped becomes the IPv4 address.
const V6_RANGES: V6Range[] = ([
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
] as Array<[string, string | null]>).map(([cidr, name]) => {
  const [addr, bits] = cidr.split('/');
  return { base: groupsToBig(v6Groups(addr) as number[]), bits: Number(bits), name };
});

const MASK128 = (1n << 128n) - 1n;

/** Parse a dotted quad (four decimal parts of 1-3 digits, each <= 255) to an unsigned 32-bit integer, or null. */
function v4ToInt(s: string): number | null {
  let n = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46 /* . */) {
      if (digits === 0 || part > 255 || ++dots > 3) return null;
      n = n * 256 + part;
      part = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      part = part * 10 + (c - 48);
      digits++;
    } else {
      return null;
    }
  }
  if (dots !== 3 || digits === 0 || part > 255) return null;
  return n * 256 + part;
}

function intToV4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** Eight 16-bit groups of a textual IPv6 address (zone id dropped), or null. */
function v6Groups(input: string): number[] | null {
  let s = input;
  const pct = s.indexOf('%');
  if (pct >= 0) s = s.slice(0, pct);
  const lastColon = s.lastIndexOf(':');
  if (s.indexOf('.', lastColon) > lastColon) {
    const v4 = v4ToInt(s.slice(lastColon + 1));
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parse = (h: string): number[] | null => {
    if (h === '') return [];
    const out: number[] = [];
    for (const g of h.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  if (!head || !rest) return null;
  const known = head.length + rest.length;
  if (halves.length === 2) {
    if (known > 7) return null;
    return [...head, ...new Array<number>(8 - known).fill(0), ...rest];
  }
  return known === 8 ? head : null;
}

function groupsToBig(g: number[]): bigint {
  let n = 0n;
  for (const x of g) n = (n << 16n) | BigInt(x);
  return n;
}

/** RFC 5952 text: lower case, no leading zeros, the longest run (>= 2) of zero groups as '::'. */
function formatV6(g: number[]): string {
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

function classifyV4(n: number): IpClass {
  const address = intToV4(n);
  for (const r of V4_RANGES) {
    if (n >= r.base && n < r.base + r.span) return r.name === null ? { version: 4, address, public: true } : { version: 4, address, public: false, range: r.name };
  }
  return { version: 4, address, public: true };
}

function inV6(n: bigint, base: bigint, bits: number): boolean {
  const mask = bits === 0 ? 0n : (MASK128 << BigInt(128 - bits)) & MASK128;
  return (n & mask) === base;
}

function classifyV6(g: number[]): IpClass {
  const n = groupsToBig(g);
  if (inV6(n, 0xffffn << 32n, 96)) return classifyV4(Number(n & 0xffffffffn));
  const address = formatV6(g);
  const embedded = (v4: number, label: string): IpClass => {
    const inner = classifyV4(v4);
    return inner.public
      ? { version: 6, address, public: true }
      : { version: 6, address, public: false, range: `${label} (${inner.range})` };
  };
  if (inV6(n, groupsToBig([0x64, 0xff9b, 0, 0, 0, 0, 0, 0]), 96)) return embedded(Number(n & 0xffffffffn), 'nat64');
  if (g[0] === 0x2002) return embedded(g[1] * 65536 + g[2], '6to4');
  for (const r of V6_RANGES) {
    if (inV6(n, r.base, r.bits)) return r.name === null ? { version: 6, address, public: true } : { version: 6, address, public: false, range: r.name };
  }
  if (g[0] < 0x2000 || g[0] > 0x3fff) return { version: 6, address, public: false, range: 'reserved' };
  return { version: 6, address, public: true };
}

/** Classify a textual IP address (IPv4 dotted quad or IPv6, zone id allowed); null when it is not one. */
export function classifyIp(ip: string): IpClass | null {
  if (typeof ip !== 'string') return null;
  const kind = isIP(ip);
  if (kind === 4) {
    const n = v4ToInt(ip);
    return n === null ? null : classifyV4(n);
  }
  if (kind === 6) {
    const g = v6Groups(ip);
    return g ? classifyV6(g) : null;
  }
  return null;
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
  const g = isIP(input) === 6 ? v6Groups(input) : null;
  if (!g) return null;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `::ffff:${intToV4(g[6] * 65536 + g[7])}`;
  return formatV6(g);
}

/**
 * The IPv4 address meant by a legacy inet_aton form, as getaddrinfo and browsers read it:
 * 1-4 dot-separated parts, each decimal, octal (leading 0) or hex (0x); the last part fills the
 * remaining bytes (2130706433, 0177.0.0.1, 0x7f.1, 127.1). Null when the input is no such form.
 * Standard dotted quads are recognised too.
 */
export function parseLegacyIpv4(input: string): string | null {
  if (typeof input !== 'string' || input.length === 0 || input.length > 64) return null;
  const s = input.endsWith('.') ? input.slice(0, -1) : input;
  const parts = s.split('.');
  if (parts.length > 4) return null;
  const values: number[] = [];
  for (const p of parts) {
    let v: number;
    if (/^0[xX][0-9a-fA-F]*$/.test(p)) v = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) v = parseInt(p.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) v = Number(p);
    else return null;
    if (!Number.isSafeInteger(v)) return null;
    values.push(v);
  }
  const last = values[values.length - 1];
  const head = values.slice(0, -1);
  if (head.some((v) => v > 255) || last >= 2 ** (8 * (5 - values.length))) return null;
  let n = 0;
  for (const v of head) n = n * 256 + v;
  n = n * 2 ** (8 * (5 - values.length)) + last;
  return intToV4(n);
}

/** True when the text is written as a plain dotted quad or IPv6 literal (not a legacy numeric form). */
export function isStandardIp(input: string): boolean {
  return isIP(input) !== 0 && (isIPv4(input) ? v4ToInt(input) !== null : v6Groups(input) !== null);
}
