// IBAN structure and checksum (ISO 13616, ISO 7064 MOD 97-10) with bank fields and an offline BIC.
import { validateBic } from './bic.js';
import { maskCardNumbers } from './card.js';
import { ibanVerdict } from './iban-check.js';
import { type CheckMethodOf, germanCheckMethod } from './iban-national.js';
import { splitBban } from './iban-bban.js';
import { inSepaScope } from './sepa.js';
import type { components } from '../../generated/api.js';

/** The BIC of a bank from its country and national bank code (adapters/bank-data/bank-directory.ts); null when unknown. */
export type BicLookup = (countryCode: string, bankCode: string) => string | null;

/** The bank's name from its country and national bank code (the same tables as BicLookup); null when unknown. */
export type BankNameLookup = (countryCode: string, bankCode: string) => string | null;

const NO_NAMES: BankNameLookup = () => null;

/** The contract's IbanResult (openapi.yaml is the source of truth). */
export type IbanResult = components['schemas']['IbanResult'];

/** Check digits that ISO 13616 never issues (98 - (n mod 97) is always 02..98). */
const NEVER_ISSUED = new Set(['00', '01', '99']);

/** Positions 3-4 when they are two digits, else ''. */
function checkDigitsOf(iban: string): string {
  const digits = iban.slice(2, 4);
  return /^[0-9]{2}$/.test(digits) ? digits : '';
}

/** Resolved BICs and whether each is well formed: the tables hold a few thousand; bounded all the same. */
const wellFormed = new Map<string, boolean>();
function bicWellFormed(bic: string): boolean {
  let ok = wellFormed.get(bic);
  if (ok === undefined) {
    if (wellFormed.size >= 4096) wellFormed.clear();
    wellFormed.set(bic, (ok = validateBic(bic).valid));
  }
  return ok;
}

export function normaliseIban(input: string): string {
  return input.trim().toUpperCase().replace(/[ -]+/g, '');
}

/**
 * Validate an IBAN: the verdict with every field that can be extracted. The BIC is resolved through `bicOf` from the
 * bank code even when the IBAN fails, as long as a bank code is there. What openapi.yaml's Iban parameter admits
 * (1-64 letters, digits, spaces, dashes) is all the operation passes here; anything else still gets a verdict.
 * `methodOf` gives a German bank code's account check method (default: the shipped table); `nameOf` the bank's name
 * (default: none known).
 */
export function validateIban(input: string, bicOf: BicLookup, methodOf: CheckMethodOf = germanCheckMethod, nameOf: BankNameLookup = NO_NAMES): IbanResult {
  const normalised = normaliseIban(input);
  const given = checkDigitsOf(normalised);
  const verdict = given !== '' && !NEVER_ISSUED.has(given) ? ibanVerdict(normalised, methodOf) : null;
  const valid = verdict?.valid === true;
  // What is no IBAN but holds a card number (12-19 digits passing Luhn, ISO/IEC 7812), e.g. one pasted into the wrong
  // field, comes back masked to its last four digits in every field taken from it. A valid IBAN is shown as it is:
  // its digit runs pass Luhn one time in ten.
  const iban = valid ? normalised : maskCardNumbers(normalised);

  const head = iban.slice(0, 2);
  const countryCode = /^[A-Z]{2}$/.test(head) ? head : '';
  const checkDigit = iban === normalised ? given : checkDigitsOf(iban);
  const fields = countryCode
    ? splitBban(countryCode, iban.slice(4))
    : { bankCode: '', branchCode: null, accountNumber: '' };

  const known = countryCode !== '' && fields.bankCode !== '';
  const bic = known ? bicOf(countryCode, fields.bankCode) : null;
  const bicValid = bic !== null && bicWellFormed(bic);

  return {
    iban,
    valid,
    countryCode,
    checkDigit,
    bankCode: fields.bankCode,
    branchCode: fields.branchCode,
    accountNumber: fields.accountNumber,
    bic,
    bicValid,
    bankName: known ? nameOf(countryCode, fields.bankCode) : null,
    sepa: inSepaScope(countryCode),
    nationalCheck: verdict?.nationalCheck ?? 'not-applicable',
  };
}
