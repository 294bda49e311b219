// BIC structure (ISO 9362): 4-letter institution, ISO 3166-1 country, 2-character location, optional 3-character branch.
import { maskCardNumbers } from './card.js';
import { isCountryCode } from './iso-countries.js';
import type { components } from '../../generated/api.js';

/** The contract's BicResult (openapi.yaml is the source of truth). */
export type BicResult = components['schemas']['BicResult'];

const INSTITUTION = /^[A-Z]{4}$/;
const LOCATION = /^[A-Z0-9]{2}$/;
const BRANCH = /^[A-Z0-9]{3}$/;

/** Whether a normalised 11-character BIC is in a bank directory, and its bank's name (adapters/bank-data). */
export type BicDirectoryLookup = (bic: string) => { inDirectory: boolean; bankName: string | null; sharedBy: number };

const NO_DIRECTORY: BicDirectoryLookup = () => ({ inDirectory: false, bankName: null, sharedBy: 0 });

export function normaliseBic(input: string): string {
  return input.trim().toUpperCase().replace(/[\s-]+/g, '');
}

/**
 * Validate a BIC: the verdict with whatever fields could be extracted. What openapi.yaml's Bic parameter admits
 * (1-64 letters, digits, spaces, dashes) is all the operation passes here; anything else still gets a verdict.
 * `directory` says whether a valid BIC is listed (default: no directory, so never).
 */
export function validateBic(input: string, directory: BicDirectoryLookup = NO_DIRECTORY): BicResult {
  const raw = normaliseBic(input);
  const normalised = raw.length === 8 ? `${raw}XXX` : raw;
  // A card number sent here by mistake comes back masked to its last four digits, in every field sliced from it. A card
  // number has 12-19 digits (ISO/IEC 7812) and a BIC 11 characters at most, so no BIC is ever changed by this.
  const bic = normalised.length < 12 ? normalised : maskCardNumbers(normalised);
  const bankCode = bic.slice(0, 4);
  const countryCode = bic.slice(4, 6);
  const locationCode = bic.slice(6, 8);
  const branchCode = bic.slice(8, 11);
  const valid =
    bic.length === 11 &&
    INSTITUTION.test(bankCode) &&
    isCountryCode(countryCode) &&
    LOCATION.test(locationCode) &&
    BRANCH.test(branchCode);
  // Only a well-formed BIC is looked up: an invalid one is in no directory.
  const { inDirectory, bankName, sharedBy } = valid ? directory(bic) : NO_DIRECTORY(bic);
  return { bic, valid, bankCode, countryCode, locationCode, branchCode, inDirectory, bankName, sharedBy };
}
