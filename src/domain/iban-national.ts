// National check digits inside the BBAN (ISO 7064 MOD 97-10 and MOD 11,10, weighted sums, Luhn, the French RIB
// key, the Italian CIN, the German banks' account check methods), for the countries whose BBAN carries one. The
// rules and their sources: docs/iban-rules.md. Each check receives a BBAN that already matched the country's
// registry format (iban-registry.ts).
import { BBAN_ALIASES } from './iban-bban.js';
import { checkGermanAccount } from './de-account-check/index.js';
import { BANK_METHODS } from './de-account-check/bank-methods.js';

type Check = (bban: string) => boolean;

const digit = (s: string, i: number): number => s.charCodeAt(i) - 48;

/**
 * Remainder mod 97 of a string read as a number, letters as 10..35 (ISO 7064 MOD 97-10 conversion); `rest` is the
 * remainder of the digits before it (the IBAN's check is the BBAN's remainder carried into its first four characters).
 */
export function mod97(s: string, rest = 0): number {
  // Reduced only once the running value passes 10^13: below 2^53 after the next step, so exact; a division per
  // dozen characters instead of one per character. `s` holds digits and upper-case letters (its callers' formats).
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    rest = code >= 65 ? rest * 100 + (code - 55) : rest * 10 + (code - 48);
    if (rest >= 1e13) rest %= 97;
  }
  return rest % 97;
}

/** Σ digit × weight over s (weights aligned to s from the left). */
function weighted(s: string, weights: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += digit(s, i) * weights[i];
  return sum;
}

/** ISO 7064 MOD 97-10 over the whole BBAN: BA, ME, MK, PT, RS, SI (MK's account may hold letters). */
const mod97Bban: Check = (bban) => mod97(bban) === 1;

/** BE: the first ten digits mod 97 (0 read as 97) are the last two. */
const belgium: Check = (bban) => {
  const rest = Number(bban.slice(0, 10)) % 97;
  return (rest === 0 ? 97 : rest) === Number(bban.slice(10, 12));
};

/**
 * CZ, SK: prefix (6 digits) and account (10 digits) are each a weighted sum ≡ 0 mod 11 with their check digit. A
 * number whose other digits sum to 1 mod 11 would need the check "digit" 10: no such account exists.
 */
const czechSlovak: Check = (bban) =>
  weighted(bban.slice(4, 10), [10, 5, 8, 4, 2, 1]) % 11 === 0 &&
  weighted(bban.slice(10, 20), [6, 3, 7, 9, 10, 5, 8, 4, 2, 1]) % 11 === 0;

/** EE: 7-3-1 weights from the right over branch and account; the check digit completes a multiple of 10. */
const estonia: Check = (bban) => {
  const sum = weighted(bban.slice(2, 15), [7, 1, 3, 7, 1, 3, 7, 1, 3, 7, 1, 3, 7]);
  return (10 - (sum % 10)) % 10 === digit(bban, 15);
};

/** ES: two "dígitos de control", weights 2^i mod 11 over bank+branch (left-padded "00") and over the account. */
const SPAIN_WEIGHTS = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6];
function spainDigit(ten: string): number {
  const d = 11 - (weighted(ten, SPAIN_WEIGHTS) % 11);
  return d === 11 ? 0 : d === 10 ? 1 : d;
}
const spain: Check = (bban) =>
  spainDigit(`00${bban.slice(0, 8)}`) === digit(bban, 8) && spainDigit(bban.slice(10, 20)) === digit(bban, 9);

/** ISO 7064 MOD 11,10: the hybrid system HR uses for bank (7 digits) and account (10 digits). */
function mod1110(s: string): boolean {
  let p = 10;
  for (let i = 0; i < s.length - 1; i++) {
    const sum = (p + digit(s, i)) % 10;
    p = ((sum === 0 ? 10 : sum) * 2) % 11;
  }
  return (11 - p) % 10 === digit(s, s.length - 1);
}
const croatia: Check = (bban) => mod1110(bban.slice(0, 7)) && mod1110(bban.slice(7, 17));

/** HU: 9-7-3-1 weights, ≡ 0 mod 10, over bank+branch (8) and the account (16, or 8 when the rest are zeros). */
const HU_WEIGHTS = [9, 7, 3, 1, 9, 7, 3, 1, 9, 7, 3, 1, 9, 7, 3, 1];
const hungary: Check = (bban) => {
  if (weighted(bban.slice(0, 8), HU_WEIGHTS.slice(0, 8)) % 10 !== 0) return false;
  const account = bban.endsWith('00000000') ? bban.slice(8, 16) : bban.slice(8, 24);
  return weighted(account, HU_WEIGHTS.slice(0, account.length)) % 10 === 0;
};

/** NO: MOD 11 with weights 5,4,3,2,7,6,5,4,3,2; remainder 1 leaves no valid check digit. */
const norway: Check = (bban) => {
  const rest = weighted(bban, [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]) % 11;
  return rest !== 1 && (11 - rest) % 11 === digit(bban, 10);
};

/** PL: the bank and branch number's check digit, weights 3,9,7,1,3,9,7 (≡ 0 mod 10 with it). */
const poland: Check = (bban) => (weighted(bban, [3, 9, 7, 1, 3, 9, 7]) + digit(bban, 7)) % 10 === 0;

/**
 * The French RIB key (FR, MC and the territories that use the French BBAN): letters of the account become digits
 * (A,J→1 B,K,S→2 ... I,R,Z→9), then bank, branch, account and key read as one number are ≡ 0 mod 97; the key
 * 97 - (89 × bank + 15 × branch + 3 × account) mod 97 runs 01..97, so 00 is never one.
 */
const RIB_LETTERS = '12345678912345678923456789'; // A..Z
const ribKey: Check = (bban) => {
  let rest = 0;
  for (let i = 0; i < bban.length; i++) {
    const code = bban.charCodeAt(i);
    const d = code >= 65 ? RIB_LETTERS.charCodeAt(code - 65) - 48 : code - 48;
    rest = (rest * 10 + d) % 97;
  }
  return rest === 0 && !bban.endsWith('00'); // the key is 97 - (...) mod 97: 01..97, never 00
};

/**
 * IT, SM: the CIN, a letter before ABI, CAB and account (22 characters). Odd positions (1st, 3rd, ...) map through
 * a fixed table, even positions count as their value (digits 0-9, letters A-Z 0-25); the sum mod 26 is the CIN.
 */
const CIN_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
const cin: Check = (bban) => {
  let sum = 0;
  for (let i = 1; i < 23; i++) {
    const code = bban.charCodeAt(i);
    const v = code >= 65 ? code - 65 : code - 48;
    sum += i % 2 === 1 ? CIN_ODD[v] : v;
  }
  return bban.charCodeAt(0) - 65 === sum % 26;
};

/**
 * MR, TN: the RIB key, ISO 7064 MOD 97-10 in the variant that makes the whole BBAN ≡ 0 mod 97: the key is
 * 97 - (bank, branch and account × 100) mod 97, so 01..97 and never 00.
 */
const ribKey97: Check = (bban) => mod97(bban) === 0 && !bban.endsWith('00');

/**
 * FI (and AX): the account's check digit, the last of the 14-digit machine form that is the BBAN (bank or branch
 * code and the account padded with zeros): Luhn, weights 2, 1, 2, ... from the right of the other 13 digits.
 */
const finland: Check = (bban) => {
  let sum = 0;
  for (let i = 12, w = 2; i >= 0; i--, w = 3 - w) {
    const p = digit(bban, i) * w;
    sum += p >= 10 ? p - 9 : p;
  }
  return (10 - (sum % 10)) % 10 === digit(bban, 13);
};

/**
 * IS: the last 10 digits are the holder's kennitala, whose 9th digit checks the first 8: weights 3, 2, 7, 6, 5, 4,
 * 3, 2, the check digit 11 minus the remainder mod 11 (remainder 0 gives 0; remainder 1 leaves none).
 */
const iceland: Check = (bban) => {
  const rest = weighted(bban.slice(12, 20), [3, 2, 7, 6, 5, 4, 3, 2]) % 11;
  return rest !== 1 && (rest === 0 ? 0 : 11 - rest) === digit(bban, 20);
};

const CHECKS: ReadonlyMap<string, Check> = new Map<string, Check>([
  ['AX', finland],
  ['BA', mod97Bban],
  ['BE', belgium],
  ['CZ', czechSlovak],
  ['EE', estonia],
  ['ES', spain],
  ['FI', finland],
  ['FR', ribKey],
  ['HR', croatia],
  ['HU', hungary],
  ['IS', iceland],
  ['IT', cin],
  ['MC', ribKey],
  ['ME', mod97Bban],
  ['MK', mod97Bban],
  ['MR', ribKey97],
  ['NO', norway],
  ['PL', poland],
  ['PT', mod97Bban],
  ['RS', mod97Bban],
  ['SI', mod97Bban],
  ['SK', czechSlovak],
  ['SM', cin],
  ['TL', mod97Bban],
  ['TN', ribKey97],
  ...Object.keys(BBAN_ALIASES)
    .filter((c) => BBAN_ALIASES[c] === 'FR')
    .map((c): [string, Check] => [c, ribKey]),
]);

/** Countries whose national check digits are verified (DE: per bank, where its method is implemented). */
export const NATIONAL_CHECK_COUNTRIES: readonly string[] = [...CHECKS.keys(), 'DE'].sort();

/**
 * The outcome of a national check: passed, failed, or not-applicable (the country has no national check digits,
 * or a German bank's method is unknown or not implemented, or exempts the account, e.g. method 09).
 */
export type NationalCheck = 'passed' | 'failed' | 'not-applicable';

/** A German bank code's Bundesbank check method id ("63", "A2", ...), or null when unknown. */
export type CheckMethodOf = (bankCode: string) => string | null;

/** The methods of the shipped table (de-account-check/bank-methods.ts, generated from schwifty's registry). */
export const germanCheckMethod: CheckMethodOf = (bankCode) => BANK_METHODS.get(bankCode) ?? null;

/** Germany: the account (the BBAN's last 10 digits) by its bank's method, where that method is implemented. */
function germany(bban: string, methodOf: CheckMethodOf): NationalCheck {
  const method = methodOf(bban.slice(0, 8));
  const result = method === null ? null : checkGermanAccount(method, bban.slice(8, 18));
  return result === 'valid' ? 'passed' : result === 'invalid' ? 'failed' : 'not-applicable';
}

/** The national check of a BBAN that matched its country's format. `methodOf` gives a German bank's method. */
export function nationalCheck(countryCode: string, bban: string, methodOf: CheckMethodOf = germanCheckMethod): NationalCheck {
  if (countryCode === 'DE') return germany(bban, methodOf);
  const check = CHECKS.get(countryCode);
  if (check === undefined) return 'not-applicable';
  return check(bban) ? 'passed' : 'failed';
}

/** True when the country has no national check or the BBAN passes it. */
export function nationalCheckPasses(countryCode: string, bban: string, methodOf: CheckMethodOf = germanCheckMethod): boolean {
  return nationalCheck(countryCode, bban, methodOf) !== 'failed';
}
