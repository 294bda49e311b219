// A bank code's BIC and bank name kept for a minute per bank directory (ISO 13616 bank codes; ADR 0040).
import type { BankNameLookup, BicLookup } from '../../domain/iban.js';

/** The two lookups of a bank directory (bank-directory.ts) that an IBAN's answer asks, by country and bank code. */
export interface BankCodeLookups {
  resolveBic: BicLookup;
  bankName: BankNameLookup;
}

/** The same lookups answered from memory: both asked of the directory once per bank code and minute. */
export interface KeptLookups {
  bicOf: BicLookup;
  nameOf: BankNameLookup;
}

/** How long a bank code's answers are kept: the Bundesbank's table changes at a date and time (a quarterly switch-over). */
const KEPT_MS = 60_000;
/** Most bank codes kept at once (clients choose the codes: memory stays bounded). */
const KEPT_MAX = 4096;

function keep(banks: BankCodeLookups): KeptLookups {
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

/** One set per directory object: a reload swaps the directory whole, and its answers start afresh. */
const byDirectory = new WeakMap<BankCodeLookups, KeptLookups>();

/** The kept lookups of this directory (made at its first IBAN). */
export function keptLookups(banks: BankCodeLookups): KeptLookups {
  let kept = byDirectory.get(banks);
  if (kept === undefined) byDirectory.set(banks, (kept = keep(banks)));
  return kept;
}
