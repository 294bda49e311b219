// Card BIN/IIN table (ISO/IEC 7812 issuer prefixes) from a binlist-format CSV (RFC 4180), read once at start-up.
import { readFile } from 'node:fs/promises';
import { leadingNumber, type BinEntry, type BinLookup, type CardType } from '../../domain/card.js';
import { ownString } from '../../domain/own-string.js';

/** Issuer data by longest matching prefix; 8-digit prefixes win over 6-digit ones. */
export interface BinTable extends BinLookup {
  lookup(digits: string): BinEntry | null;
}

/** A loaded table also says how many ranges it holds (for the start-up log). */
export interface LoadedBinTable extends BinTable {
  readonly size: number;
}

interface Range {
  start: number;
  end: number;
  entry: BinEntry;
}

/** Ranges of one prefix length, sorted by start, with a running maximum of ends for overlap-safe search. */
interface Level {
  length: number;
  ranges: Range[];
  maxEnd: number[];
}

const MAX_PREFIX = 15;
const PREPAID_TRUE = new Set(['true', 'y', 'yes', '1']);

/**
 * Parse CSV text (RFC 4180: quoted fields, doubled quotes, CRLF or LF, newlines inside quotes) into rows. A line
 * without a quote or a lone CR is split on commas at once (the common case: a third of the start-up's cost when
 * every character went through the loop); any other row goes through the character loop.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let nextQuote = text.indexOf('"', i);
  let nextCr = text.indexOf('\r', i);
  while (i < n) {
    let nl = text.indexOf('\n', i);
    if (nl < 0) nl = n;
    if (nextQuote >= 0 && nextQuote < i) nextQuote = text.indexOf('"', i);
    if (nextCr >= 0 && nextCr < i) nextCr = text.indexOf('\r', i);
    const end = nl > i && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    if ((nextQuote < 0 || nextQuote >= nl) && (nextCr < 0 || nextCr >= end)) {
      const row = text.slice(i, end).split(',');
      if (row.length > 1 || row[0] !== '') rows.push(row);
      i = nl + 1;
    } else i = parseRow(text, i, rows);
  }
  return rows;
}

/** One row from `i` through the character loop (its quotes may span lines); returns where the next row starts. */
function parseRow(text: string, i: number, rows: string[][]): number {
  const row: string[] = [];
  let field = '';
  let quoted = false;
  const endRow = (): void => {
    row.push(field);
    if (row.length > 1 || row[0] !== '') rows.push(row);
  };
  for (; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n') {
      endRow();
      return i + 1;
    } else if (ch === '\r') {
      endRow();
      return text[i + 1] === '\n' ? i + 2 : i + 1;
    } else field += ch;
  }
  if (field !== '' || row.length > 0) endRow();
  return text.length;
}

function entryFrom(get: (col: string) => string): BinEntry {
  const type = get('type').toLowerCase();
  const prepaid = PREPAID_TRUE.has(get('prepaid').toLowerCase());
  const cardType: CardType | null = prepaid
    ? 'PREPAID'
    : type === 'credit'
      ? 'CREDIT'
      : type === 'debit'
        ? 'DEBIT'
        : type === 'prepaid'
          ? 'PREPAID'
          : null;
  const bank = get('bank_name');
  const country = get('country').toUpperCase();
  return {
    cardType,
    issuingBank: bank === '' ? null : bank,
    cardCountry: /^[A-Z]{2}$/.test(country) ? country : null,
  };
}

/** Build a table from CSV text (pure). Rows without a usable digit prefix are skipped. */
export function binTableFromCsv(text: string): LoadedBinTable {
  const [header = [], ...body] = parseCsv(text);
  const index = new Map(header.map((name, i) => [name.trim().toLowerCase(), i]));
  const byLength = new Map<number, Range[]>();
  let size = 0;
  for (const cells of body) {
    const get = (col: string): string => {
      const i = index.get(col);
      return i === undefined ? '' : ownString((cells[i] ?? '').trim());
    };
    const startText = get('iin_start');
    const endText = get('iin_end') || startText;
    if (!/^[0-9]+$/.test(startText) || startText.length > MAX_PREFIX) continue;
    if (!/^[0-9]+$/.test(endText) || endText.length !== startText.length) continue;
    const start = Number(startText);
    const end = Number(endText);
    if (end < start) continue;
    const list = byLength.get(startText.length) ?? [];
    list.push({ start, end, entry: entryFrom(get) });
    byLength.set(startText.length, list);
    size++;
  }
  const levels: Level[] = [...byLength.entries()]
    .sort(([a], [b]) => b - a)
    .map(([length, ranges]) => {
      ranges.sort((a, b) => a.start - b.start || a.end - b.end);
      const maxEnd: number[] = [];
      let max = -1;
      for (const r of ranges) maxEnd.push((max = Math.max(max, r.end)));
      return { length, ranges, maxEnd };
    });

  return {
    size,
    lookup(digits: string): BinEntry | null {
      for (const level of levels) {
        const key = leadingNumber(digits, level.length);
        if (key < 0) continue;
        const found = findRange(level, key);
        if (found) return found.entry;
      }
      return null;
    },
  };
}

/** The narrowest range of the level that contains `x`, or null. */
function findRange(level: Level, x: number): Range | null {
  const { ranges, maxEnd } = level;
  let lo = 0;
  let hi = ranges.length - 1;
  let last = -1; // the last index with start <= x
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid].start <= x) {
      last = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  let best: Range | null = null;
  for (let i = last; i >= 0 && maxEnd[i] >= x; i--) {
    const r = ranges[i];
    if (r.end >= x && (!best || r.end - r.start < best.end - best.start)) best = r;
  }
  return best;
}

/** Read and index a BIN CSV file (asynchronously, at start-up). */
export async function loadBinTable(csvPath: string): Promise<LoadedBinTable> {
  return binTableFromCsv(await readFile(csvPath, 'utf8'));
}
