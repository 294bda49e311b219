// Banking operations (openapi.yaml tag Banking): IBAN (ISO 13616) and BIC (ISO 9362) structure checks.
import { validateBic, type BicDirectoryLookup } from '../domain/bic.js';
import { validateIban, type BankNameLookup, type BicLookup } from '../domain/iban.js';
import { germanCheckMethod } from '../domain/iban-national.js';
import type { OperationHandler } from './types.js';

/** The bank directory in use (adapters/bank-data/bank-directory.ts): one object per load, swapped whole on a reload. */
interface BankLookups {
  resolveBic: BicLookup;
  bankName: BankNameLookup;
  bicEntry: BicDirectoryLookup;
}

export interface BankingDeps {
  /** The directory at the time of the call: each request reads it once and answers from that one. */
  banks: () => BankLookups;
}

/** How long a bank code's answers are kept: the Bundesbank's table changes at a date and time (a quarterly switch-over). */
const KEPT_MS = 60_000;
/** Most bank codes kept at once (clients choose the codes: memory stays bounded). */
const KEPT_MAX = 4096;

/** A bank code's BIC and bank name, asked of one directory once a minute instead of on every request (ADR 0040). */
function keptLookups(banks: BankLookups): { bicOf: BicLookup; nameOf: BankNameLookup } {
  let until = 0;
  const kept = new Map<string, { bic: string | null; name: string | null }>();
  const answer = (countryCode: string, bankCode: string) => {
    const now = Date.now();
    if (now >= until || kept.size >= KEPT_MAX) {
      kept.clear();
      until = now + KEPT_MS;
    }
    const key = `${countryCode}:${bankCode}`;
    let found = kept.get(key);
    if (found === undefined) kept.set(key, (found = { bic: banks.resolveBic(countryCode, bankCode), name: banks.bankName(countryCode, bankCode) }));
    return found;
  };
  return { bicOf: (country, code) => answer(country, code).bic, nameOf: (country, code) => answer(country, code).name };
}

export function createBankingOperations(deps: BankingDeps): {
  validateIban: OperationHandler<'validateIban'>;
  validateBic: OperationHandler<'validateBic'>;
} {
  // One set per directory: a reload swaps the directory whole, and its answers start afresh.
  const lookups = new WeakMap<BankLookups, ReturnType<typeof keptLookups>>();
  return {
    /** The validator admits 1-64 letters, digits, spaces and dashes with one letter or digit (openapi.yaml Iban). */
    validateIban({ request }) {
      const banks = deps.banks();
      let kept = lookups.get(banks);
      if (kept === undefined) lookups.set(banks, (kept = keptLookups(banks)));
      return { status: 200, body: validateIban(request.params.iban, kept.bicOf, germanCheckMethod, kept.nameOf) };
    },

    /** The validator admits what it admits for an IBAN (openapi.yaml Bic). */
    validateBic({ request }) {
      return { status: 200, body: validateBic(request.params.bic, deps.banks().bicEntry) };
    },
  };
}
