// IP address text: the one parser (RFC 791 dotted quad, RFC 4291 §2.2 IPv6, RFC 4007 §11 zone ids) and RFC 5952 text.
//
// Strictness (one for the whole service): exactly the texts node:net's isIP accepts. IPv4 is four decimal parts
// 0-255 without leading zeros ("01.2.3.4" is refused: inet_aton reads it as octal). IPv6 is eight groups of 1-4 hex
// digits, "::" for one or more zero groups, an optional dotted quad as the last two groups, and an optional zone id
// ("%" and one or more of [0-9A-Za-z.:-]) that is dropped. Nothing else: no brackets, ports, spaces or prefixes.
// The lenient form (inet_aton's numeric spellings) is parseLegacyIpv4 below, read only where the TLS target guard
// must recognise every spelling of an address (domain/tls-target.ts).

/** Parsed-address words: 128 bits, most significant word first; IPv4 is word 3 with words 0-2 zero. */
export type IpWords = Uint32Array;

export function ipWords(): IpWords {
  return new Uint32Array(4);
}

/** The value of a strict dotted quad in s[from, to), or -1. No string is made. */
function v4At(s: string, from: number, to: number): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 46 /* . */) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && !(digits === 1 && octet === 0)) {
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return -1;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? value * 256 + octet : -1;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Zone id characters node:net accepts: [0-9A-Za-z.:-], at least one. */
function validZone(s: string, from: number): boolean {
  if (from >= s.length) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok = (c >= 48 && c <= 58) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 46;
    if (!ok) return false;
  }
  return true;
}

/** Groups of the IPv6 address being parsed (JavaScript runs one call at a time). */
const GROUPS = new Uint16Array(8);

/** Read the groups of s[0, end) into GROUPS; the group count, and the index of "::" in gap (-1 when none); -1 if malformed. */
function v6Groups(s: string, end: number, gapOut: Int8Array): number {
  let i = 0;
  let count = 0;
  let gap = -1;
  if (end >= 2 && s.charCodeAt(0) === 58 && s.charCodeAt(1) === 58) {
    gap = 0;
    i = 2;
  }
  while (i < end) {
    let j = i;
    let group = 0;
    for (let v = hexValue(s.charCodeAt(j)); j < end && j - i < 4 && v >= 0; v = hexValue(s.charCodeAt(++j))) group = group * 16 + v;
    if (j < end && s.charCodeAt(j) === 46) {
      const v4 = v4At(s, i, end); // a dotted quad: the last two groups
      if (v4 < 0 || count > 6) return -1;
      GROUPS[count++] = v4 >>> 16;
      GROUPS[count++] = v4 & 0xffff;
      break;
    }
    if (j === i || count === 8) return -1;
    GROUPS[count++] = group;
    if (j === end) break;
    if (s.charCodeAt(j) !== 58) return -1;
    if (j + 1 < end && s.charCodeAt(j + 1) === 58) {
      if (gap >= 0) return -1;
      gap = count;
      i = j + 2;
    } else if (j + 1 === end) return -1;
    else i = j + 1;
  }
  gapOut[0] = gap;
  return gap < 0 ? (count === 8 ? count : -1) : count <= 7 ? count : -1;
}

const GAP = new Int8Array(1);

/** Parse IPv6 text (zone id allowed) into out; false when malformed. */
function parseV6(s: string, out: IpWords): boolean {
  const pct = s.indexOf('%');
  if (pct >= 0 && !validZone(s, pct + 1)) return false;
  const count = v6Groups(s, pct < 0 ? s.length : pct, GAP);
  if (count < 0) return false;
  const gap = GAP[0];
  const zeros = 8 - count;
  let high = 0;
  for (let k = 0; k < 8; k++) {
    const g = gap < 0 || k < gap ? GROUPS[k] : k < gap + zeros ? 0 : GROUPS[k - zeros];
    if ((k & 1) === 0) high = g;
    else out[k >> 1] = (high * 65536 + g) >>> 0;
  }
  return true;
}

/**
 * Parse an address in the strict form above into out (no allocation). 4 or 6, or 0 when the text is not an address.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) answers 6: isV4Mapped tells it.
 */
export function parseIpInto(s: string, out: IpWords): 0 | 4 | 6 {
  if (typeof s !== 'string') return 0;
  if (s.indexOf(':') < 0) {
    const v4 = v4At(s, 0, s.length);
    if (v4 < 0) return 0;
    out[0] = out[1] = out[2] = 0;
    out[3] = v4;
    return 4;
  }
  return parseV6(s, out) ? 6 : 0;
}

/** ::ffff:0:0/96, the IPv4-mapped block (RFC 4291 §2.5.5.2). */
export function isV4Mapped(w: IpWords): boolean {
  return w[0] === 0 && w[1] === 0 && w[2] === 0xffff;
}

export function formatV4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** RFC 5952 text of a 128-bit address: lower case, no leading zeros, the first longest run (>= 2) of zero groups as '::'. */
export function formatV6(w: IpWords): string {
  const g = (k: number) => (k & 1 ? w[k >> 1] & 0xffff : w[k >> 1] >>> 16);
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && g(j) === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  let text = '';
  for (let k = 0; k < 8; k++) {
    if (k === bestStart) {
      text += '::';
      k += bestLen - 1;
      continue;
    }
    text += (text === '' || text.endsWith(':') ? '' : ':') + g(k).toString(16);
  }
  return text;
}

/** A range as first and last address: IPv4 as numbers, IPv6 as BigInt (for building tables, never per request). */
export type IpRange = { version: 4; first: number; last: number } | { version: 6; first: bigint; last: bigint };

const V6_MAX = (1n << 128n) - 1n;
const CIDR_WORDS = ipWords();

/**
 * A CIDR block (`a.b.c.d/n`, `x::/n`, RFC 4632) or a single address, as its first and last address; null when
 * malformed (the address in the strict form above, without a zone id). Host bits set in the address (`10.0.0.1/8`)
 * are ignored, as the publishers' own tools do.
 */
export function parseCidr(text: string): IpRange | null {
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text : text.slice(0, slash);
  const version = addr.includes('%') ? 0 : parseIpInto(addr, CIDR_WORDS);
  if (version === 0) return null;
  const width = version === 4 ? 32 : 128;
  const bitsText = slash < 0 ? String(width) : text.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bitsText) || Number(bitsText) > width) return null;
  const hostBits = width - Number(bitsText);
  if (version === 4) {
    const span = 2 ** hostBits;
    const first = Math.floor(CIDR_WORDS[3] / span) * span;
    return { version, first, last: first + span - 1 };
  }
  let value = 0n;
  for (const word of CIDR_WORDS) value = (value << 32n) | BigInt(word);
  const mask = (1n << BigInt(hostBits)) - 1n;
  const first = value & ~mask & V6_MAX;
  return { version, first, last: first | mask };
}

/**
 * The lenient form: the IPv4 address meant by a legacy inet_aton spelling, as getaddrinfo and browsers read it:
 * 1-4 dot-separated parts, each decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes
 * (2130706433, 0177.0.0.1, 0x7f.1, 127.1). Null when the input is no such form. Standard dotted quads are read too.
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
  return formatV4(n);
}
