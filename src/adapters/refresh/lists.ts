// The lists DATA_REFRESH keeps current, each from its publisher's URL (settings in src/config.ts): the Tor Project's
// bulk exit list (hourly), the hosting providers' published ranges (daily), the disposable-domain blocklist (daily).
// Each gives the refresher its download, its parse (off the event loop) and its swap into the value in use.
import { readFile, stat } from 'node:fs/promises';
import { HOSTING_SOURCES, hostingAsnsText } from '../../domain/hosting-sources.js';
import { rangeTableFromData } from '../../domain/ip-range-table.js';
import type { LoadedRanges } from '../ip-data/ip-lists.js';
import type { FetchedList } from './fetch-list.js';
import { parseOffLoop, type ParseResult } from './off-loop.js';
import type { RefreshList } from './refresher.js';

export type ListFetch = (url: string) => Promise<FetchedList>;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const today = () => new Date().toISOString().slice(0, 10);
const DATE_LINE = /^#\s*date:\s*(\d{4}-\d{2}-\d{2})\s*$/m;

/** The file the service reads the list from now (a saved download, a configured file or the shipped one). */
type InUse = () => Promise<string>;

/** A range table built in the worker, wrapped on the event loop (a few microseconds: no copy, no parse). */
export function loadedFromResult(result: ParseResult, path: string, date: string): LoadedRanges {
  if (result.kind !== 'ranges') throw new Error('not a range list');
  return { path, table: rangeTableFromData(result.data), entries: result.entries, date };
}

/** A Set of the domains, filled a slice at a time between turns of the event loop (each slice well under 20 ms). */
export async function domainSetInSlices(domains: string, slice = 5_000): Promise<Set<string>> {
  const names = domains.split('\n');
  const set = new Set<string>();
  for (let i = 0; i < names.length; i += slice) {
    for (const name of names.slice(i, i + slice)) set.add(name);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return set;
}

/** A list file read and parsed off the event loop: SIGHUP's and the refresh's reload, and the first shrink check. */
export async function parseFileOffLoop(kind: 'tor' | 'hosting' | 'disposable' | 'asns', path: string): Promise<{ result: ParseResult; date: string | null }> {
  const text = await readFile(path, 'utf8');
  return { result: await parseOffLoop({ kind, text, path }), date: savedDate(text) };
}

/** A hosting or Tor list file as the service uses it, parsed and built off the event loop (reload and refresh). */
export async function loadRangesOffLoop(kind: 'tor' | 'hosting', path: string): Promise<LoadedRanges> {
  const { result, date } = await parseFileOffLoop(kind, path);
  return loadedFromResult(result, path, date ?? (await stat(path)).mtime.toISOString().slice(0, 10));
}

/** A disposable-domain list file parsed off the event loop, its Set filled in slices; dated by its `# date:` line. */
export async function loadDomainsOffLoop(path: string): Promise<{ domains: ReadonlySet<string>; date: string | null }> {
  const { result, date } = await parseFileOffLoop('disposable', path);
  if (result.kind !== 'domains') throw new Error(`${path}: not a domain list`);
  return { domains: await domainSetInSlices(result.domains), date };
}

const countsOf = (kind: 'tor' | 'hosting' | 'disposable' | 'asns', inUse: InUse) => async () => (await parseFileOffLoop(kind, await inUse())).result.counts;

export function torExitList(fetch: ListFetch, url: string, inUse: InUse): RefreshList {
  return {
    name: 'ip-tor-exits',
    intervalMs: HOUR,
    file: 'tor-exits.txt',
    async fetch() {
      const got = await fetch(url);
      const date = got.lastModified ?? today();
      const text = `# Tor exit addresses, downloaded by the service from ${got.url} (DATA_REFRESH)\n# date: ${date}\n${got.body}`;
      return { result: await parseOffLoop({ kind: 'tor', text, path: url }), date };
    },
    inUse: countsOf('tor', inUse),
  };
}

/** The hosting list from every provider with a URL (a provider whose setting is empty is left out). */
export function hostingList(fetch: ListFetch, urls: Readonly<Record<string, readonly string[]>>, inUse: InUse): RefreshList {
  const sources = HOSTING_SOURCES.filter((s) => (urls[s.id] ?? []).length > 0);
  return {
    name: 'ip-hosting',
    intervalMs: DAY,
    file: 'hosting-ranges.csv',
    async fetch(path) {
      const texts: Record<string, string[]> = {};
      const from: Record<string, string> = {};
      for (const s of sources) {
        texts[s.id] = await Promise.all(
          urls[s.id].map(async (u) => {
            const page = await fetch(u);
            const link = s.link?.(page.body);
            return link ? (await fetch(link)).body : page.body;
          }),
        );
        from[s.id] = urls[s.id].join(' ');
      }
      const result = await parseOffLoop({ kind: 'hosting-sources', texts, from, today: today(), path });
      return { result, date: DATE_LINE.exec(result.text.slice(0, 500))?.[1] ?? today() };
    },
    inUse: countsOf('hosting', inUse),
  };
}

/** The hosting ASN list (X4BNet's format), less the access networks ADR 0026 leaves out, as make data builds it. */
export function hostingAsnList(fetch: ListFetch, url: string, inUse: InUse): RefreshList {
  return {
    name: 'ip-hosting-asns',
    intervalMs: DAY,
    file: 'hosting-asns.txt',
    async fetch() {
      const got = await fetch(url);
      const date = got.lastModified ?? today();
      const text = hostingAsnsText(got.body, { by: 'the service (DATA_REFRESH)', from: got.url, date, today: today() });
      return { result: await parseOffLoop({ kind: 'asns', text, path: url }), date };
    },
    inUse: countsOf('asns', inUse),
  };
}

export function disposableList(fetch: ListFetch, url: string, inUse: InUse): RefreshList {
  return {
    name: 'email-disposable',
    intervalMs: DAY,
    file: 'disposable-domains.txt',
    async fetch() {
      const got = await fetch(url);
      const date = got.lastModified ?? today();
      const result = await parseOffLoop({ kind: 'disposable', text: got.body, path: url });
      return { result: { ...result, text: `# Disposable email domains, downloaded by the service from ${got.url} (DATA_REFRESH)\n# date: ${date}\n${result.text}` }, date };
    },
    inUse: countsOf('disposable', inUse),
  };
}

/** The date a saved list names in its `# date:` line (read at start), or null. */
const savedDate = (text: string): string | null => DATE_LINE.exec(text.slice(0, 500))?.[1] ?? null;
