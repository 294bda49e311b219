// Labelled IP address ranges (CIDR, RFC 4632; IPv6 text, RFC 4291 §2.2) as a sorted table of disjoint ranges, built once
// per load and looked up by binary search: O(log n) per address, no allocation per lookup.

/** A range as read: IPv4 as numbers, IPv6 as BigInt (build time only: never per request). */
export type LabelledRange = ({ version: 4; first: number; last: number } | { version: 6; first: bigint; last: bigint }) & { label: string };

export interface RangeTable {
  /** The label names; a lookup answers an index into this list. */
  readonly labels: readonly string[];
  /** Disjoint ranges per family after overlaps are resolved. */
  readonly size: { v4: number; v6: number };
  /** The label index of the narrowest range holding a canonical address (dotted quad or RFC 5952), or -1. */
  lookup(address: string, version: 4 | 6): number;
}

const V6_MAX = (1n << 128n) - 1n;

/** The 128-bit value of an IPv6 address in text form (with `::` and a trailing dotted quad allowed), or null. */
function ipv6ToBigInt(text: string): bigint | null {
  let head = text;
  let tailV4: bigint | null = null;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    tailV4 = ipv4ToBigInt(text.slice(lastColon + 1));
    if (tailV4 === null) return null;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const left = groups(halves[0]);
  const right = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  let value = 0n;
  for (const g of [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return tailV4 === null ? value : (value & ~0xffffffffn) | tailV4;
}

/** The 32-bit value of a dotted quad (four decimal octets, no leading zeros beyond one digit), or null. */
function ipv4ToBigInt(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return null;
    value = (value << 8n) | BigInt(p);
  }
  return value;
}

/** A CIDR block (`a.b.c.d/n`, `x::/n`) or a single address, as its first and last address; null when malformed. */
export function parseCidr(text: string): { version: 4; first: number; last: number } | { version: 6; first: bigint; last: bigint } | null {
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text : text.slice(0, slash);
  const version: 4 | 6 = addr.includes(':') ? 6 : 4;
  const width = version === 4 ? 32 : 128;
  const bitsText = slash < 0 ? String(width) : text.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bitsText) || Number(bitsText) > width) return null;
  const hostBits = width - Number(bitsText);
  // Host bits set in the address (`10.0.0.1/8`) are ignored, as the publishers' own tools do.
  if (version === 4) {
    const value = parseV4(addr);
    if (value < 0) return null;
    const span = 2 ** hostBits;
    const first = Math.floor(value / span) * span;
    return { version, first, last: first + span - 1 };
  }
  const value = ipv6ToBigInt(addr);
  if (value === null) return null;
  const mask = (1n << BigInt(hostBits)) - 1n;
  const first = value & ~mask & V6_MAX;
  return { version, first, last: first | mask };
}

/** Min-heap of open ranges by size, then by the order they were read (the earlier wins a tie). */
class OpenRanges<T extends number | bigint> {
  private readonly items: { size: T; order: number; label: number; last: T }[] = [];
  get length(): number {
    return this.items.length;
  }
  top() {
    return this.items[0];
  }
  push(item: { size: T; order: number; label: number; last: T }): void {
    const a = this.items;
    a.push(item);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }
  pop(): void {
    const a = this.items;
    const end = a.pop()!;
    if (a.length === 0) return;
    a[0] = end;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.less(a[l], a[m])) m = l;
      if (r < a.length && this.less(a[r], a[m])) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m], a[i]];
      i = m;
    }
  }
  private less(x: { size: T; order: number }, y: { size: T; order: number }): boolean {
    return x.size < y.size || (x.size === y.size && x.order < y.order);
  }
}

interface Flat<T> {
  first: T;
  last: T;
  label: number;
}

/**
 * Disjoint ranges of one family, each address labelled by the narrowest input range holding it (a provider's /24
 * inside another's /16 keeps its own label), adjacent ranges of one label merged. `next` is x + 1 in the family's type.
 */
function flatten<T extends number | bigint>(ranges: readonly Flat<T>[], next: (x: T) => T): Flat<T>[] {
  const cmp = (a: T, b: T) => (a < b ? -1 : a > b ? 1 : 0);
  const byStart = ranges.map((r, order) => ({ first: r.first, last: r.last, label: r.label, order, size: minus(r.last, r.first) })).sort((a, b) => cmp(a.first, b.first));
  const points: T[] = [];
  for (const r of ranges) points.push(r.first, next(r.last));
  points.sort(cmp);
  const out: Flat<T>[] = [];
  const open = new OpenRanges<T>();
  let cursor = 0;
  for (let i = 0; i < points.length - 1; i++) {
    const at = points[i];
    if (at === points[i + 1]) continue;
    while (cursor < byStart.length && byStart[cursor].first === at) {
      const r = byStart[cursor++];
      open.push({ size: r.size, order: r.order, label: r.label, last: r.last });
    }
    while (open.length > 0 && open.top().last < at) open.pop();
    if (open.length === 0) continue;
    const end = points[i + 1];
    const label = open.top().label;
    const prev = out[out.length - 1];
    if (prev && prev.label === label && next(prev.last) === at) prev.last = prevOf(end);
    else out.push({ first: at, last: prevOf(end), label });
  }
  return out;
}

/** a - b in the family's type. */
function minus<T extends number | bigint>(a: T, b: T): T {
  return (typeof a === 'bigint' ? a - (b as bigint) : (a as number) - (b as number)) as T;
}

/** x - 1 in the family's type. */
function prevOf<T extends number | bigint>(x: T): T {
  return (typeof x === 'bigint' ? x - 1n : (x as number) - 1) as T;
}

/**
 * A table's arrays: what a worker thread that built the table sends back (the typed arrays are transferred, not
 * copied), so that a large list is parsed and merged off the event loop and the swap costs a few microseconds.
 */
export interface RangeTableData {
  labels: string[];
  start4: Uint32Array;
  end4: Uint32Array;
  label4: Uint16Array;
  start6: Uint32Array;
  end6: Uint32Array;
  label6: Uint16Array;
}

/** The arrays of the table of `ranges` (any order, overlaps allowed): the costly part of a build. */
export function buildRangeTableData(ranges: Iterable<LabelledRange>): RangeTableData {
  const labels: string[] = [];
  const labelIndex = new Map<string, number>();
  const v4: Flat<number>[] = [];
  const v6: Flat<bigint>[] = [];
  for (const r of ranges) {
    let label = labelIndex.get(r.label);
    if (label === undefined) {
      label = labels.length;
      labels.push(r.label);
      labelIndex.set(r.label, label);
    }
    if (r.version === 4) v4.push({ first: r.first, last: r.last, label });
    else v6.push({ first: r.first, last: r.last, label });
  }
  const flat4 = flatten(v4, (x) => x + 1);
  const flat6 = flatten(v6, (x) => x + 1n);
  const start4 = new Uint32Array(flat4.length);
  const end4 = new Uint32Array(flat4.length);
  const label4 = new Uint16Array(flat4.length);
  flat4.forEach((r, i) => {
    start4[i] = r.first;
    end4[i] = r.last;
    label4[i] = r.label;
  });
  // IPv6: four 32-bit words per address, most significant first.
  const start6 = new Uint32Array(flat6.length * 4);
  const end6 = new Uint32Array(flat6.length * 4);
  const label6 = new Uint16Array(flat6.length);
  const words = (value: bigint, into: Uint32Array, at: number) => {
    for (let w = 3; w >= 0; w--) {
      into[at + w] = Number(value & 0xffffffffn);
      value >>= 32n;
    }
  };
  flat6.forEach((r, i) => {
    words(r.first, start6, i * 4);
    words(r.last, end6, i * 4);
    label6[i] = r.label;
  });
  return { labels, start4, end4, label4, start6, end6, label6 };
}

/** Build the table from ranges (any order, overlaps allowed). */
export function buildRangeTable(ranges: Iterable<LabelledRange>): RangeTable {
  return rangeTableFromData(buildRangeTableData(ranges));
}

/** The table over arrays built elsewhere (buildRangeTableData, here or in a worker thread). */
export function rangeTableFromData({ labels, start4, end4, label4, start6, end6, label6 }: RangeTableData): RangeTable {
  const scratch = new Uint32Array(4);

  function lookup4(address: string): number {
    const x = parseV4(address);
    if (x < 0) return -1;
    let lo = 0;
    let hi = start4.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (start4[mid] <= x) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found >= 0 && end4[found] >= x ? label4[found] : -1;
  }

  function lookup6(address: string): number {
    if (label6.length === 0 || !parseV6(address, scratch)) return -1;
    let lo = 0;
    let hi = label6.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (compare(start6, mid * 4, scratch) <= 0) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found >= 0 && compare(end6, found * 4, scratch) >= 0 ? label6[found] : -1;
  }

  return {
    labels,
    size: { v4: label4.length, v6: label6.length },
    lookup: (address, version) => (version === 4 ? lookup4(address) : lookup6(address)),
  };
}

/** Sign of table[at..at+3] minus x, word by word. */
function compare(table: Uint32Array, at: number, x: Uint32Array): number {
  for (let w = 0; w < 4; w++) {
    const a = table[at + w];
    const b = x[w];
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

/** A canonical dotted quad as an unsigned number, or -1 (per request: a character loop, no strings made). */
function parseV4(s: string): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57 && digits < 3 && !(digits === 1 && octet === 0)) {
      octet = octet * 10 + (c - 48);
      digits++;
      if (octet > 255) return -1;
    } else return -1;
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + octet;
}

/** Groups of the address being parsed (one lookup at a time: JavaScript runs one call at a time). */
const GROUPS = new Uint16Array(8);

/** An IPv6 address in text (`::` allowed, no embedded IPv4) into four 32-bit words; false when malformed. */
function parseV6(s: string, into: Uint32Array): boolean {
  const n = s.length;
  let count = 0;
  let gap = -1;
  let group = 0;
  let digits = 0;
  let i = 0;
  if (n >= 2 && s.charCodeAt(0) === 58 && s.charCodeAt(1) === 58) {
    gap = 0;
    i = 2;
  }
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 58) {
      if (digits === 0 || count === 8) return false;
      GROUPS[count++] = group;
      group = 0;
      digits = 0;
      if (i + 1 < n && s.charCodeAt(i + 1) === 58) {
        if (gap >= 0) return false;
        gap = count;
        i++;
      } else if (i === n - 1) return false;
    } else {
      const v = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
      if (v < 0 || digits === 4) return false;
      group = group * 16 + v;
      digits++;
    }
  }
  if (digits > 0) {
    if (count === 8) return false;
    GROUPS[count++] = group;
  } else if (gap !== count) return false;
  if (gap < 0 ? count !== 8 : count > 7) return false;
  const zeros = 8 - count;
  let high = 0;
  for (let k = 0; k < 8; k++) {
    const g = gap < 0 || k < gap ? GROUPS[k] : k < gap + zeros ? 0 : GROUPS[k - zeros];
    if ((k & 1) === 0) high = g;
    else into[k >> 1] = (high * 65536 + g) >>> 0;
  }
  return true;
}
