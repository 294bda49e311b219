// Hosting-provider address ranges and Tor exit addresses from files (HOSTING_RANGES_FILE, TOR_EXIT_FILE), each read
// into a range table once per load; the combined IP security flags per address. Formats: docs/data-sources.md.
import { readFile } from 'node:fs/promises';
import { ipWords, parseCidr, parseIpInto } from '../../domain/ip-address.js';
import { buildRangeTable, type LabelledRange, type RangeTable } from '../../domain/ip-range-table.js';
import type { IpClass } from '../../domain/ip-ranges.js';
import { asnIndex, type HostingAsns } from './hosting-asns.js';
import { dateOf } from './list-text.js';
import type { components } from '../../../generated/api.js';

/** What the parsers build from the ranges read: the table by default; its arrays in a worker (src/adapters/refresh/). */
type Build<T> = (ranges: LabelledRange[]) => T;

/** The contract's IpSecurity (openapi.yaml). */
export type IpSecurity = components['schemas']['IpSecurity'];

export interface LoadedRanges {
  path: string;
  table: RangeTable;
  /** Input lines that gave a range. */
  entries: number;
  /** The data's date: the file's `# date: YYYY-MM-DD` line, else the file's modification day. */
  date: string;
}

/** Lines without comments (`#` to the end) and blanks, trimmed. */
function dataLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => {
      const hash = l.indexOf('#');
      return (hash < 0 ? l : l.slice(0, hash)).trim();
    })
    .filter((l) => l !== '');
}

/**
 * Hosting ranges from CSV lines `cidr,provider` (a header line `cidr,provider` may lead). A line whose first field is
 * not a CIDR block or address is an error naming its line: a file half understood would answer "not hosting" for
 * what it meant to list.
 */
// The generic form first: ReturnType<typeof ...> (tests) reads the last overload, the table's.
export function hostingRangesFromText<T>(text: string, path: string, build: Build<T>): { table: T; entries: number };
export function hostingRangesFromText(text: string, path?: string): { table: RangeTable; entries: number };
export function hostingRangesFromText(text: string, path = 'hosting ranges', build: Build<unknown> = buildRangeTable): { table: unknown; entries: number } {
  const ranges: LabelledRange[] = [];
  for (const [i, line] of dataLines(text).entries()) {
    const comma = line.indexOf(',');
    const cidr = (comma < 0 ? line : line.slice(0, comma)).trim();
    const provider = comma < 0 ? '' : line.slice(comma + 1).trim().replace(/^"(.*)"$/, '$1');
    if (i === 0 && cidr.toLowerCase() === 'cidr') continue;
    const range = parseCidr(cidr);
    if (!range || provider === '') throw new Error(`${path}: data line ${i + 1} is not "cidr,provider": ${line.slice(0, 80)}`);
    ranges.push({ ...range, label: provider });
  }
  if (ranges.length === 0) throw new Error(`${path}: no range (lines of "cidr,provider")`);
  return { table: build(ranges), entries: ranges.length };
}

/**
 * Tor exit addresses: one address or CIDR block per line (the Tor Project's bulk exit list), or the exit list's
 * `ExitAddress <address> <date> <time>` lines (its other lines are skipped).
 */
export function torExitsFromText<T>(text: string, path: string, build: Build<T>): { table: T; entries: number };
export function torExitsFromText(text: string, path?: string): { table: RangeTable; entries: number };
export function torExitsFromText(text: string, path = 'Tor exits', build: Build<unknown> = buildRangeTable): { table: unknown; entries: number } {
  const ranges: LabelledRange[] = [];
  const lines = dataLines(text);
  const exitList = lines.some((l) => l.startsWith('ExitAddress '));
  for (const [i, line] of lines.entries()) {
    if (exitList && !line.startsWith('ExitAddress ')) continue;
    const address = exitList ? line.split(/\s+/)[1] : line;
    const range = parseCidr(address);
    if (!range) throw new Error(`${path}: data line ${i + 1} is not an address: ${line.slice(0, 80)}`);
    ranges.push({ ...range, label: 'Tor' });
  }
  if (ranges.length === 0) throw new Error(`${path}: no exit address`);
  return { table: build(ranges), entries: ranges.length };
}

async function load(path: string, parse: (text: string, path: string) => { table: RangeTable; entries: number }): Promise<LoadedRanges> {
  const text = await readFile(path, 'utf8');
  const { table, entries } = parse(text, path);
  return { path, table, entries, date: await dateOf(path, text) };
}

export const loadHostingRanges = (path: string): Promise<LoadedRanges> => load(path, hostingRangesFromText);
export const loadTorExits = (path: string): Promise<LoadedRanges> => load(path, torExitsFromText);

/** What the ASN database says of an address (GeoResult's fields), when it knows it. */
interface AsnOfAddress {
  asn: number | null;
  asnOrganization: string | null;
}

export interface IpSecurityLookup {
  /**
   * The flags for a classified address and, when the GeoIP ASN database knows it, its autonomous system. One shared,
   * frozen object per answer: nothing is made per request (an ASN's answer is made once, on its first sighting).
   */
  lookup(c: IpClass, as?: AsnOfAddress | null): IpSecurity;
}

const TOR_STATES = [false, true, null] as const;
const answer = (provider: string | null | undefined, isTor: boolean | null): IpSecurity =>
  Object.freeze({ isHosting: provider === undefined ? null : provider !== null, hostingProvider: provider ?? null, isTor });

/**
 * The flags from whichever lists are loaded. An address is hosting when a published range holds it (its provider is
 * named) or when its autonomous system is on the hosting ASN list (the AS organisation is named, as the ASN database
 * spells it, else as the list does). A flag is null when no loaded list can say: the ranges hold no range of the
 * address's family and no ASN is known for it (the Tor Project's bulk list is IPv4 only). Unknown is not "no".
 */
export function createIpSecurity(hosting: LoadedRanges | null, tor: LoadedRanges | null, asns: HostingAsns | null = null): IpSecurityLookup {
  const providers = hosting?.table.labels ?? [];
  // byRange[provider + 1][tor state: 0 no, 1 yes, 2 unknown]; unknown[tor state] when no list can say.
  const byRange = [null, ...providers].map((p) => TOR_STATES.map((t) => answer(p, t)));
  const unknown = TOR_STATES.map((t) => answer(undefined, t));
  const byAsn: (IpSecurity | undefined)[] = new Array((asns?.asns.length ?? 0) * 3);
  const covers = (r: LoadedRanges | null, version: 4 | 6) => r !== null && (version === 4 ? r.table.size.v4 : r.table.size.v6) > 0;
  function ofAsn(index: number, organisation: string | null, torState: number): IpSecurity {
    const name = organisation || asns!.names[index];
    const slot = index * 3 + torState;
    const made = byAsn[slot];
    if (made !== undefined && made.hostingProvider === name) return made;
    return (byAsn[slot] = answer(name, TOR_STATES[torState]));
  }
  const words = ipWords();
  return {
    lookup(c, as) {
      parseIpInto(c.address, words); // once for both tables
      const torState = covers(tor, c.version) ? (tor!.table.lookupWords(words, c.version) >= 0 ? 1 : 0) : 2;
      const rangesKnown = covers(hosting, c.version);
      const provider = rangesKnown ? hosting!.table.lookupWords(words, c.version) : -1;
      if (provider >= 0) return byRange[provider + 1][torState];
      const asnKnown = asns !== null && typeof as?.asn === 'number';
      const index = asnKnown ? asnIndex(asns, as!.asn!) : -1;
      if (index >= 0) return ofAsn(index, as!.asnOrganization, torState);
      return rangesKnown || asnKnown ? byRange[0][torState] : unknown[torState];
    },
  };
}
