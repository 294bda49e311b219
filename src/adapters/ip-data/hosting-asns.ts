// Hosting, data-centre and cloud networks by autonomous system number (RFC 6793 4-byte ASNs) from a file
// (HOSTING_ASN_FILE; the shipped one is X4BNet/lists_vpn's data-centre list: docs/adr/0026-hosting-by-network-owner.md).
import { readFile } from 'node:fs/promises';
import { dateOf } from './list-text.js';

export interface HostingAsns {
  path: string;
  /** The listed ASNs, ascending, each once. */
  readonly asns: Uint32Array;
  /** The list's own name for each ASN (its comment), in the order of `asns`. */
  readonly names: readonly string[];
  /** Data lines read (duplicates included). */
  entries: number;
  /** The file's `# date: YYYY-MM-DD` line, else its modification day. */
  date: string;
}

// `AS24940 # HETZNER-AS, DE` (X4BNet's format), `24940,"HETZNER-AS, DE"` (brianhama's CSV) or a bare number.
const LINE = /^(?:AS)?(\d{1,10})\s*(?:(?:#|,)\s*"?(.*?)"?\s*)?$/i;

/**
 * Read the list: one ASN per line with an optional name; `#` lines are comments. A line that is no ASN is an error
 * naming it, as for the hosting ranges: a list half understood would answer "not hosting" for what it meant to list.
 */
export function hostingAsnsFromText(text: string, path = 'hosting ASNs'): Omit<HostingAsns, 'path' | 'date'> {
  const byAsn = new Map<number, string>();
  let entries = 0;
  for (const [i, line] of text.split('\n').entries()) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || /^asn\s*,/i.test(trimmed)) continue;
    const m = LINE.exec(trimmed);
    const asn = m ? Number(m[1]) : NaN;
    if (!m || asn > 0xffffffff) throw new Error(`${path}: line ${i + 1} is not "AS<number> # name": ${trimmed.slice(0, 80)}`);
    entries++;
    if (!byAsn.has(asn)) byAsn.set(asn, m[2]?.trim() || `AS${asn}`); // the first name given wins
  }
  if (byAsn.size === 0) throw new Error(`${path}: no ASN (lines of "AS<number> # name")`);
  const sorted = [...byAsn.keys()].sort((a, b) => a - b);
  return { asns: Uint32Array.from(sorted), names: sorted.map((a) => byAsn.get(a)!), entries };
}

export async function loadHostingAsns(path: string): Promise<HostingAsns> {
  const text = await readFile(path, 'utf8');
  return { path, ...hostingAsnsFromText(text, path), date: await dateOf(path, text) };
}

/** The index of an ASN in the list, or -1 (binary search: nothing is allocated). */
export function asnIndex(list: Pick<HostingAsns, 'asns'>, asn: number): number {
  const a = list.asns;
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] === asn) return mid;
    if (a[mid] < asn) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
