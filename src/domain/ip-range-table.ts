// Labelled IP address ranges (CIDR, RFC 4632; IPv6 text, RFC 4291 §2.2) as a sorted table of disjoint ranges, built once
// per load and looked up by binary search: O(log n) per address, no allocation per lookup.
import { ipWords, parseIpInto, type IpRange, type IpWords } from './ip-address.js';
import { ownString } from './own-string.js';

/** A range as read, with its label (build time only: never per request). */
export type LabelledRange = IpRange & { label: string };

export interface RangeTable {
  /** The label names; a lookup answers an index into this list (32-bit: any number of labels a file can hold). */
  readonly labels: readonly string[];
  /** Disjoint ranges per family after overlaps are resolved. */
  readonly size: { v4: number; v6: number };
  /** The label index of the narrowest range holding an address (text in the strict form of ip-address.ts), or -1. */
  lookup(address: string, version: 4 | 6): number;
  /** The same for an address already parsed (parseIpInto): IPv4 in word 3. */
  lookupWords(words: IpWords, version: 4 | 6): number;
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
  four: Packed;
  six: Packed;
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
      labels.push(ownString(r.label));
      labelIndex.set(r.label, label);
    }
    if (r.version === 4) v4.push({ first: r.first, last: r.last, label });
    else v6.push({ first: r.first, last: r.last, label });
  }
  return { labels, four: pack(flatten(v4, (x) => x + 1), 1), six: pack(flatten(v6, (x) => x + 1n), 4) };
}

/** Build the table from ranges (any order, overlaps allowed). */
export function buildRangeTable(ranges: Iterable<LabelledRange>): RangeTable {
  return rangeTableFromData(buildRangeTableData(ranges));
}

/** The buffers of a table's arrays: what a worker thread transfers (moves, not copies) with the data. */
export function rangeTableBuffers({ four, six }: RangeTableData): ArrayBuffer[] {
  return [four, six].flatMap((p) => [p.starts, p.ends, p.labels].map((a) => a.buffer as ArrayBuffer));
}

/** The table over arrays built elsewhere (buildRangeTableData, here or in a worker thread). */
export function rangeTableFromData({ labels, four, six }: RangeTableData): RangeTable {
  const scratch = ipWords();
  // IPv4 is the last word of the parsed address; IPv6 all four.
  const lookupWords = (words: IpWords, version: 4 | 6) => (version === 4 ? search(four, words, 3) : search(six, words, 0));
  return {
    labels,
    size: { v4: four.labels.length, v6: six.labels.length },
    lookupWords,
    lookup: (address, version) => (parseIpInto(address, scratch) === version ? lookupWords(scratch, version) : -1),
  };
}

/** Disjoint ranges in typed arrays: `width` 32-bit words per address, most significant first. */
interface Packed {
  width: 1 | 4;
  starts: Uint32Array;
  ends: Uint32Array;
  labels: Uint32Array;
}

function pack<T extends number | bigint>(flat: readonly Flat<T>[], width: 1 | 4): Packed {
  const p: Packed = { width, starts: new Uint32Array(flat.length * width), ends: new Uint32Array(flat.length * width), labels: new Uint32Array(flat.length) };
  const put = (value: T, into: Uint32Array, at: number) => {
    let v = BigInt(value);
    for (let w = width - 1; w >= 0; w--) {
      into[at + w] = Number(v & 0xffffffffn);
      v >>= 32n;
    }
  };
  flat.forEach((r, i) => {
    put(r.first, p.starts, i * width);
    put(r.last, p.ends, i * width);
    p.labels[i] = r.label;
  });
  return p;
}

/** The label of the range holding x[from..from+width), or -1: binary search for the last range starting at or below it. */
function search(p: Packed, x: IpWords, from: number): number {
  let lo = 0;
  let hi = p.labels.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (compare(p.starts, mid * p.width, x, from, p.width) <= 0) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && compare(p.ends, found * p.width, x, from, p.width) >= 0 ? p.labels[found] : -1;
}

/** Sign of table[at..at+width) minus x[from..from+width), word by word. */
function compare(table: Uint32Array, at: number, x: IpWords, from: number, width: number): number {
  for (let w = 0; w < width; w++) {
    const a = table[at + w];
    const b = x[from + w];
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}
