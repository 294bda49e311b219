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
// Bank names come from the entry that gave the BIC (the Bundesbank name for DE, the national registry's for the
// data/banks countries); a BIC only iban-to-bic knows (it has no names) takes the name another table gives that BIC.
// The same tables, indexed by BIC, say whether a BIC is in a directory at all (bicEntry).
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { bankDataByBLZ } from 'bankdata-germany';
import { BANK_METHODS } from '../../domain/de-account-check/bank-methods.js';
import { BBAN_ALIASES } from '../../domain/iban-bban.js';

/** One country's table as data/banks/<CC>.json holds it: bank code -> [BIC, bank name]. */
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
  /** The bank's name from the same entry; null when not listed or the table has no name. */
  bankName: string | null;
}

export interface BankDirectory {
  /** The BIC of the bank with this national bank code, or null. `at` selects the Bundesbank data (default now). */
  resolveBic(countryCode: string, bankCode: string, at?: Date): string | null;
  /** The name of the bank with this national bank code, from the table that gives its BIC; null when unknown. */
  bankName(countryCode: string, bankCode: string, at?: Date): string | null;
  /** Whether a normalised 11-character BIC is in a shipped directory, and its bank's name. */
  bicEntry(bic: string): BicEntry;
  /** Countries with a table (the territories that borrow France's codes included). */
  countries: readonly string[];
  /** The data/banks tables loaded. */
  tables: readonly BankTableInfo[];
}

type Table = ReadonlyMap<string, string>;
/** Bank code -> name, for the tables that carry names. */
type Names = ReadonlyMap<string, string>;

const require = createRequire(import.meta.url);
/** iban-to-bic's tables, keyed by country then bank code (loaded with the module, at start). */
const IBAN_TO_BIC = require('iban-to-bic/datasets') as Readonly<Record<string, Readonly<Record<string, string>>>>;
const PACKAGE_COUNTRIES = ['AT', 'BE', 'ES', 'FR', 'LU', 'NL'] as const;
const PACKAGE_TABLES: ReadonlyMap<string, Table> = new Map(
  PACKAGE_COUNTRIES.map((c) => [c, new Map(Object.entries(IBAN_TO_BIC[c] ?? {}).map(([code, bic]) => [code, expandBic(bic)]))]),
);

/** Countries whose BBAN is the French RIB and whose banks may sit in the French tables (registry "includes"). */
const SHARES_FR = ['MC', ...Object.keys(BBAN_ALIASES).filter((c) => BBAN_ALIASES[c] === 'FR')];

function expandBic(bic: string): string {
  const upper = bic.trim().toUpperCase();
  return upper.length === 8 ? `${upper}XXX` : upper;
}

interface Link {
  bics: Table | undefined;
  names: Names | undefined;
}

/** The first entry any table gives for the code whose BIC belongs to `country`. */
function firstOwn(country: string, code: string, chain: readonly Link[]): { bic: string; link: Link } | null {
  for (const link of chain) {
    const bic = link.bics?.get(code);
    if (bic !== undefined && bic.slice(4, 6) === country) return { bic, link };
  }
  return null;
}

function germanBic(bankCode: string, at?: Date): string | null {
  const bic = bankDataByBLZ(bankCode, at)?.bic;
  return bic ? expandBic(bic) : null;
}

/** BIC -> bank name (or '' when no table names it), and head office (first 8) -> the same, for bicEntry. */
interface BicIndex {
  full: Map<string, string>;
  head: Map<string, string>;
  /** German bank code -> the Bundesbank's name now (a map read instead of the package's lookup per request). */
  germanNames: Map<string, string>;
}

/** Of two names for one BIC (several bank codes share it), the shorter: "Commerzbank" before "Commerzbank GF-B48". */
const better = (known: string | undefined, name: string): boolean => known === undefined || known === '' || (name !== '' && name.length < known.length);

function addToIndex(index: BicIndex, bic: string, name = ''): void {
  if (better(index.full.get(bic), name)) index.full.set(bic, name);
  const head = bic.slice(0, 8);
  const headName = index.full.get(`${head}XXX`);
  // A head office is named by its own entry (XXX) when listed, else by any of its branches.
  index.head.set(head, headName !== undefined && headName !== '' ? headName : better(index.head.get(head), name) ? name : index.head.get(head)!);
}

/** Every BIC the shipped tables hold: data/banks, the Bundesbank's (by the German bank codes we know) and iban-to-bic's. */
function bicIndex(own: ReadonlyMap<string, Table>, ownNames: ReadonlyMap<string, Names>): BicIndex {
  const index: BicIndex = { full: new Map(), head: new Map(), germanNames: new Map() };
  for (const [country, table] of own) {
    const names = ownNames.get(country);
    for (const [code, bic] of table) addToIndex(index, bic, names?.get(code));
  }
  for (const code of BANK_METHODS.keys()) {
    const entry = bankDataByBLZ(code);
    if (entry?.bankName) index.germanNames.set(code, entry.bankName);
    if (entry?.bic) addToIndex(index, expandBic(entry.bic), entry.bankName);
  }
  for (const table of PACKAGE_TABLES.values()) for (const bic of table.values()) addToIndex(index, bic, undefined);
  return index;
}

function createDirectory(own: ReadonlyMap<string, Table>, ownNames: ReadonlyMap<string, Names>, tables: readonly BankTableInfo[]): BankDirectory {
  const chains = new Map<string, Link[]>();
  const link = (c: string): Link => ({ bics: own.get(c), names: ownNames.get(c) });
  const packaged = (c: string): Link => ({ bics: PACKAGE_TABLES.get(c), names: undefined });
  const countries = new Set(['DE', ...own.keys(), ...PACKAGE_COUNTRIES]);
  for (const c of countries) chains.set(c, [link(c), packaged(c)]);
  for (const c of SHARES_FR) {
    chains.set(c, [link(c), link('FR'), packaged('FR')]);
    countries.add(c);
  }
  let index: BicIndex | null = null;
  // Built at the first BIC question (a few ms): the IBAN answers do not need it.
  const indexNow = () => (index ??= bicIndex(own, ownNames));
  const nameOfBic = (bic: string): string | null => indexNow().full.get(bic) || (bic.endsWith('XXX') ? indexNow().head.get(bic.slice(0, 8)) : '') || null;
  return {
    resolveBic(countryCode, bankCode, at) {
      if (bankCode === '') return null;
      if (countryCode === 'DE') return germanBic(bankCode, at);
      const chain = chains.get(countryCode);
      return chain ? (firstOwn(countryCode, bankCode, chain)?.bic ?? null) : null;
    },
    bankName(countryCode, bankCode, at) {
      if (bankCode === '') return null;
      if (countryCode === 'DE') return (at === undefined ? indexNow().germanNames.get(bankCode) : undefined) ?? (bankDataByBLZ(bankCode, at)?.bankName || null);
      const chain = chains.get(countryCode);
      const found = chain ? firstOwn(countryCode, bankCode, chain) : null;
      if (!found) return null;
      return found.link.names?.get(bankCode) || nameOfBic(found.bic);
    },
    bicEntry(bic) {
      const { full, head } = indexNow();
      const inDirectory = full.has(bic) || (bic.endsWith('XXX') && head.has(bic.slice(0, 8)));
      return { inDirectory, bankName: inDirectory ? nameOfBic(bic) : null };
    },
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
  const ownNames = new Map<string, Names>();
  const infos: BankTableInfo[] = [];
  for (const file of files) {
    if (!/^[A-Z]{2}$/.test(file.country ?? '') || typeof file.banks !== 'object' || file.banks === null) throw new Error(`${join(dir, `${file.country}.json`)}: not a bank table (country, banks)`);
    const entries = Object.entries(file.banks);
    own.set(file.country, new Map(entries.map(([code, [bic]]) => [code, expandBic(bic)])));
    ownNames.set(file.country, new Map(entries.filter(([, [, name]]) => typeof name === 'string' && name !== '').map(([code, [, name]]) => [code, name])));
    infos.push({ country: file.country, source: file.source, date: file.date, entries: entries.length });
  }
  const directory = createDirectory(own, ownNames, infos);
  directory.bicEntry('XXXXXXXXXXX'); // builds the BIC index now, beside the directory in use, not at a request
  return directory;
}

/** The packaged tables alone (DE, AT, BE, ES, FR, LU, NL and the territories), without data/banks: no disk read. */
export const PACKAGED_BANKS: BankDirectory = createDirectory(new Map(), new Map(), []);
export const resolveBic = PACKAGED_BANKS.resolveBic;
