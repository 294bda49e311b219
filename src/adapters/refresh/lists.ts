// The lists DATA_REFRESH keeps current, each from its publisher's URL (settings in src/config.ts): the Tor Project's
// bulk exit list (hourly), the hosting providers' published ranges (daily), the disposable-domain blocklist (daily).
// Each gives the refresher its download, its parse (off the event loop) and its swap into the value in use.
import { HOSTING_SOURCES } from '../../domain/hosting-sources.js';
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

/** The data in use, as the refresher needs it: its counts for the shrink check and a swap. */
interface Hooks<T> {
  inUse(): Record<string, number> | null;
  swap(value: T, date: string): void;
}

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

export function torExitList(fetch: ListFetch, url: string, hooks: Hooks<LoadedRanges>): RefreshList {
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
    inUse: hooks.inUse,
    swap: async (result, date, path) => hooks.swap(loadedFromResult(result, path, date), date),
  };
}

/** The hosting list from every provider with a URL (a provider whose setting is empty is left out). */
export function hostingList(fetch: ListFetch, urls: Readonly<Record<string, readonly string[]>>, hooks: Hooks<LoadedRanges>): RefreshList {
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
    inUse: hooks.inUse,
    swap: async (result, date, path) => hooks.swap(loadedFromResult(result, path, date), date),
  };
}

export function disposableList(fetch: ListFetch, url: string, hooks: Hooks<ReadonlySet<string>>): RefreshList {
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
    inUse: hooks.inUse,
    async swap(result, date) {
      if (result.kind !== 'domains') throw new Error('not a domain list');
      hooks.swap(await domainSetInSlices(result.domains), date);
    },
  };
}

/** The date a saved list names in its `# date:` line (read at start), or null. */
export const savedDate = (text: string): string | null => DATE_LINE.exec(text.slice(0, 500))?.[1] ?? null;
