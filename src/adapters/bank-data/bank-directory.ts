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
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { bankDataByBLZ } from 'bankdata-germany';
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

export interface BankDirectory {
  /** The BIC of the bank with this national bank code, or null. `at` selects the Bundesbank data (default now). */
  resolveBic(countryCode: string, bankCode: string, at?: Date): string | null;
  /** Countries with a table (the territories that borrow France's codes included). */
  countries: readonly string[];
  /** The data/banks tables loaded. */
  tables: readonly BankTableInfo[];
}

type Table = ReadonlyMap<string, string>;

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

/** The first BIC any table gives for the code that belongs to `country`. */
function firstOwn(country: string, code: string, tables: readonly (Table | undefined)[]): string | null {
  for (const table of tables) {
    const bic = table?.get(code);
    if (bic !== undefined && bic.slice(4, 6) === country) return bic;
  }
  return null;
}

function germanBic(bankCode: string, at?: Date): string | null {
  const bic = bankDataByBLZ(bankCode, at)?.bic;
  return bic ? expandBic(bic) : null;
}

function createDirectory(own: ReadonlyMap<string, Table>, tables: readonly BankTableInfo[]): BankDirectory {
  const chains = new Map<string, (Table | undefined)[]>();
  const countries = new Set(['DE', ...own.keys(), ...PACKAGE_COUNTRIES]);
  for (const c of countries) chains.set(c, [own.get(c), PACKAGE_TABLES.get(c)]);
  for (const c of SHARES_FR) {
    chains.set(c, [own.get(c), own.get('FR'), PACKAGE_TABLES.get('FR')]);
    countries.add(c);
  }
  return {
    resolveBic(countryCode, bankCode, at) {
      if (bankCode === '') return null;
      if (countryCode === 'DE') return germanBic(bankCode, at);
      const chain = chains.get(countryCode);
      return chain ? firstOwn(countryCode, bankCode, chain) : null;
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
  const infos: BankTableInfo[] = [];
  for (const file of files) {
    own.set(file.country, new Map(Object.entries(file.banks).map(([code, [bic]]) => [code, expandBic(bic)])));
    infos.push({ country: file.country, source: file.source, date: file.date, entries: Object.keys(file.banks).length });
  }
  return createDirectory(own, infos);
}

/** The packaged tables alone (DE, AT, BE, ES, FR, LU, NL and the territories), without data/banks: no disk read. */
const PACKAGED = createDirectory(new Map(), []);
export const resolveBic = PACKAGED.resolveBic;
