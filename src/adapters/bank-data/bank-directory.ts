// BIC (ISO 9362) of a bank from its national bank code, offline. Sources, licences and dates: docs/data-sources.md.
//
// - DE: `bankdata-germany` (Deutsche Bundesbank bank sort code file), which switches between the data sets it carries
//   by date; `at` selects one.
// - 42 countries from data/banks/<CC>.json (schwifty's bank registry, built from the national banks' own files by
//   scripts/build-bank-tables.ts), read once at start by loadBankDirectory (asynchronously, never per request).
// - AT, BE, ES, FR, LU, NL: `iban-to-bic` fills the bank codes the data/banks table lacks.
// - MC and the French territories share the French bank codes (the RIB): their own table first, then France's.
// Whatever the table, a BIC is answered only for its own country (characters 5-6 equal the IBAN's country code):
// Société Générale's French BIC is never the answer for a Monaco IBAN. Unknown codes give null.
// Bank names belong to the bank code: the code's own entry in its country's table (the Bundesbank's for DE, the
// national registry's for the data/banks countries), whether or not that entry has a BIC of the country. A code
// only iban-to-bic knows (it has no names) has no name: the name of the bank whose BIC it routes to is another
// bank's when that BIC is a group's or a clearing head's. The same tables, indexed by BIC, say whether a BIC is in
// a directory at all and which banks list it (bicEntry): a BIC listed for several banks names none of them.
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { bankDataByBLZ } from 'bankdata-germany';
import { BANK_METHODS } from '../../domain/de-account-check/bank-methods.js';
import { BanksOfBic } from '../../domain/bank-names.js';
import { BBAN_ALIASES } from '../../domain/iban-bban.js';

/** One country's table as data/banks/<CC>.json holds it: bank code -> [BIC or "", bank name or ""]. */
interface BankTableFile {
  country: string;
  source: string;
  licence: string;
  /** When the source file last changed (YYYY-MM-DD). */
  date: string;
  banks: Record<string, [string, string]>;
}

interface BankTableInfo {
  country: string;
  source: string;
  date: string;
  entries: number;
}

/** What the directories say of one BIC. */
interface BicEntry {
  /** The BIC (11 characters) is listed, or for a head office (branch XXX) any BIC of its first 8 characters is. */
  inDirectory: boolean;
  /** The bank's name when the BIC itself is listed for one bank; null when not listed, shared or unnamed. */
  bankName: string | null;
  /** How many different banks list this exact BIC: 0 when it is not itself listed, 2 or more when it is shared. */
  sharedBy: number;
}

export interface BankDirectory {
  /** The BIC of the bank with this national bank code, or null. `at` selects the Bundesbank data (default now). */
  resolveBic(countryCode: string, bankCode: string, at?: Date): string | null;
  /** The name of the bank with this national bank code, from the code's own entry; null when unknown or unnamed. */
  bankName(countryCode: string, bankCode: string, at?: Date): string | null;
  /** Whether a normalised 11-character BIC is in a shipped directory, its bank's name and how many banks list it. */
  bicEntry(bic: string): BicEntry;
  /** Countries with a table (the territories that borrow France's codes included). */
  countries: readonly string[];
  /** The data/banks tables loaded. */
  tables: readonly BankTableInfo[];
}

/** One bank code's entry: its BIC ('' when the table gives none) and its name ('' when none). */
interface Row {
  bic: string;
  name: string;
}
type Table = ReadonlyMap<string, Row>;

const require = createRequire(import.meta.url);
/** iban-to-bic's tables, keyed by country then bank code (loaded with the module, at start). */
const IBAN_TO_BIC = require('iban-to-bic/datasets') as Readonly<Record<string, Readonly<Record<string, string>>>>;
const PACKAGE_COUNTRIES = ['AT', 'BE', 'ES', 'FR', 'LU', 'NL'] as const;
const PACKAGE_TABLES: ReadonlyMap<string, Table> = new Map(
  PACKAGE_COUNTRIES.map((c) => [c, new Map(Object.entries(IBAN_TO_BIC[c] ?? {}).map(([code, bic]) => [code, { bic: expandBic(bic), name: '' }]))]),
);

/** Countries whose BBAN is the French RIB and whose banks may sit in the French tables (registry "includes"). */
const SHARES_FR = ['MC', ...Object.keys(BBAN_ALIASES).filter((c) => BBAN_ALIASES[c] === 'FR')];

function expandBic(bic: string): string {
  const upper = bic.trim().toUpperCase();
  return upper.length === 8 ? `${upper}XXX` : upper;
}

const ofCountry = (bic: string, country: string) => bic.slice(4, 6) === country;

interface Link {
  table: Table | undefined;
  /** The country's own table: its entries name their codes whatever their BIC. */
  home: boolean;
}

/** The first entry any table gives for the code whose BIC belongs to `country`. */
function firstOwn(country: string, code: string, chain: readonly Link[]): string | null {
  for (const link of chain) {
    const bic = link.table?.get(code)?.bic;
    if (bic !== undefined && ofCountry(bic, country)) return bic;
  }
  return null;
}

/** The code's own name: its home entry's, or a borrowed table's (France's for MC) where that entry's BIC is ours. */
function ownName(country: string, code: string, chain: readonly Link[]): string | null {
  for (const link of chain) {
    const row = link.table?.get(code);
    if (row === undefined) continue;
    if (link.home) return row.name || null;
    if (ofCountry(row.bic, country)) return row.name || null;
  }
  return null;
}

function germanBic(bankCode: string, at?: Date): string | null {
  const bic = bankDataByBLZ(bankCode, at)?.bic;
  return bic ? expandBic(bic) : null;
}

/** BIC -> the banks listing it; head office (first 8) -> listed at all, for bicEntry. */
interface BicIndex {
  full: Map<string, BanksOfBic>;
  heads: Set<string>;
  /** German bank code -> the Bundesbank's name now (a map read instead of the package's lookup per request). */
  germanNames: Map<string, string>;
}

function addToIndex(index: BicIndex, bic: string, name: string): void {
  let banks = index.full.get(bic);
  if (banks === undefined) index.full.set(bic, (banks = new BanksOfBic()));
  banks.add(name);
  index.heads.add(bic.slice(0, 8));
}

/** Every BIC the shipped tables hold: data/banks, the Bundesbank's (by the German bank codes we know) and iban-to-bic's. */
function bicIndex(own: ReadonlyMap<string, Table>): BicIndex {
  const index: BicIndex = { full: new Map(), heads: new Set(), germanNames: new Map() };
  for (const table of own.values()) for (const { bic, name } of table.values()) if (bic !== '') addToIndex(index, bic, name);
  for (const code of BANK_METHODS.keys()) {
    const entry = bankDataByBLZ(code);
    if (entry?.bankName) index.germanNames.set(code, entry.bankName);
    if (entry?.bic) addToIndex(index, expandBic(entry.bic), entry.bankName ?? '');
  }
  for (const table of PACKAGE_TABLES.values()) for (const { bic } of table.values()) addToIndex(index, bic, '');
  return index;
}

function lookUpBic(index: BicIndex, bic: string): BicEntry {
  const banks = index.full.get(bic);
  if (banks !== undefined) return { inDirectory: true, bankName: banks.name, sharedBy: banks.banks };
  // A head office known only through its branches: they may be different banks (GENODEF1XXX), so no name.
  const head = bic.endsWith('XXX') && index.heads.has(bic.slice(0, 8));
  return { inDirectory: head, bankName: null, sharedBy: 0 };
}

function createDirectory(own: ReadonlyMap<string, Table>, tables: readonly BankTableInfo[]): BankDirectory {
  const chains = new Map<string, Link[]>();
  const link = (c: string, home: boolean): Link => ({ table: own.get(c), home });
  const packaged = (c: string): Link => ({ table: PACKAGE_TABLES.get(c), home: false });
  const countries = new Set(['DE', ...own.keys(), ...PACKAGE_COUNTRIES]);
  for (const c of countries) chains.set(c, [link(c, true), packaged(c)]);
  for (const c of SHARES_FR) {
    chains.set(c, [link(c, true), link('FR', false), packaged('FR')]);
    countries.add(c);
  }
  let index: BicIndex | null = null;
  // Built at the first BIC question (a few ms): the IBAN answers do not need it.
  const indexNow = () => (index ??= bicIndex(own));
  return {
    resolveBic(countryCode, bankCode, at) {
      if (bankCode === '') return null;
      if (countryCode === 'DE') return germanBic(bankCode, at);
      const chain = chains.get(countryCode);
      return chain ? firstOwn(countryCode, bankCode, chain) : null;
    },
    bankName(countryCode, bankCode, at) {
      if (bankCode === '') return null;
      if (countryCode === 'DE') return (at === undefined ? indexNow().germanNames.get(bankCode) : undefined) ?? (bankDataByBLZ(bankCode, at)?.bankName || null);
      const chain = chains.get(countryCode);
      return chain ? ownName(countryCode, bankCode, chain) : null;
    },
    bicEntry: (bic) => lookUpBic(indexNow(), bic),
    countries: [...countries].sort(),
    tables,
  };
}

/** Read every data/banks/<CC>.json (asynchronously, once) and build the directory. */
export async function loadBankDirectory(dir: string): Promise<BankDirectory> {
  const names = (await readdir(dir)).filter((f) => /^[A-Z]{2}\.json$/.test(f)).sort();
  const files = await Promise.all(
    names.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as BankTableFile),
  );
  const own = new Map<string, Table>();
  const infos: BankTableInfo[] = [];
  for (const file of files) {
    if (!/^[A-Z]{2}$/.test(file.country ?? '') || typeof file.banks !== 'object' || file.banks === null) throw new Error(`${join(dir, `${file.country}.json`)}: not a bank table (country, banks)`);
    const entries = Object.entries(file.banks);
    own.set(file.country, new Map(entries.map(([code, [bic, name]]) => [code, { bic: expandBic(bic ?? ''), name: typeof name === 'string' ? name : '' }])));
    infos.push({ country: file.country, source: file.source, date: file.date, entries: entries.length });
  }
  const directory = createDirectory(own, infos);
  directory.bicEntry('XXXXXXXXXXX'); // builds the BIC index now, beside the directory in use, not at a request
  return directory;
}

/** The packaged tables alone (DE, AT, BE, ES, FR, LU, NL and the territories), without data/banks: no disk read. */
export const PACKAGED_BANKS: BankDirectory = createDirectory(new Map(), []);
export const resolveBic = PACKAGED_BANKS.resolveBic;
