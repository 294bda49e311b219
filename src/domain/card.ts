// Card numbers (ISO/IEC 7812): Luhn checksum, brand by issuer prefix and length, issuer data by BIN.
import type { components } from '../../generated/api.js';

export type CardBrand = 'Visa' | 'Mastercard' | 'AmericanExpress' | 'Discover' | 'DinersClub' | 'JCB' | 'Unknown';
export type CardType = 'CREDIT' | 'DEBIT' | 'PREPAID';

/** Issuer data for a BIN/IIN prefix. */
export interface BinEntry {
  cardType: CardType | null;
  issuingBank: string | null;
  /** ISO 3166-1 alpha-2, upper-case. */
  cardCountry: string | null;
}

/** Anything that maps a card number's leading digits to issuer data (see src/adapters/bank-data/bin-table.ts). */
export interface BinLookup {
  lookup(digits: string): BinEntry | null;
}

/** The contract's CardValidationResult (openapi.yaml is the source of truth). */
export type CardResult = components['schemas']['CardValidationResult'];

/** Lengths each brand issues. */
const BRAND_LENGTHS: Readonly<Record<Exclude<CardBrand, 'Unknown'>, readonly number[]>> = {
  Visa: [13, 16, 19],
  Mastercard: [16],
  AmericanExpress: [15],
  Discover: [16, 17, 18, 19],
  DinersClub: [14, 15, 16, 17, 18, 19],
  JCB: [16, 17, 18, 19],
};

/** Every non-digit character removed; runs of digits are copied whole ("4111 1111 ..." is four slices). */
export function sanitiseCardNumber(input: string): string {
  let out = '';
  let run = -1;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (run < 0) run = i;
    } else if (run >= 0) {
      out += input.slice(run, i);
      run = -1;
    }
  }
  if (run === 0) return input;
  return run > 0 ? out + input.slice(run) : out;
}

/** The Luhn (mod 10) checksum over a string of digits; false for "" or any non-digit. */
export function luhnValid(digits: string): boolean {
  if (digits.length === 0) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const UNBROKEN_RUN = /(?<!\d)\d{12,19}(?!\d)/g;
/**
 * What may separate the digit groups of a written card number: one to three characters that are neither letters,
 * digits nor the mask's '*' (space, tab, '-', '.', '_', '/', '+', ...), or percent-encoded ones (%20, %2E...)
 * as in a request path still encoded.
 */
const SEPARATOR = '(?:%[0-9A-Fa-f]{2}|[^\\p{L}\\p{N}*]){1,3}';
/** Digit groups joined by separators. */
const GROUPED_RUN = new RegExp(`(?<![\\d*])\\d{1,19}(?:${SEPARATOR}\\d{1,19})+(?![\\d*])`, 'gu');
/** A grouped run's tokens: digit groups and the separators between them. */
const TOKEN = new RegExp(`\\d+|${SEPARATOR}`, 'gu');

const masked = (digits: string): string => `${'*'.repeat(digits.length - 4)}${digits.slice(-4)}`;

/**
 * `text` with every possible card number (ISO/IEC 7812: 12-19 digits passing Luhn) masked to its last four: an
 * unbroken run of digits, or consecutive groups of a grouped run (whatever separates the groups: spaces, tabs,
 * '-', '.', '_', '/', '+', up to three of them, or their percent-encodings), so that a number stays masked with
 * other digits beside it. For echoing a request path or value a client put a card number in by mistake. It errs
 * towards privacy: other grouped digits (an IBAN written in fours, an IP address) are masked too when some window
 * of them happens to pass Luhn.
 */
export function maskCardNumbers(text: string): string {
  return text.replace(UNBROKEN_RUN, (run) => (luhnValid(run) ? masked(run) : run)).replace(GROUPED_RUN, maskGroups);
}

/** Longer grouped runs than this are no typed card number: all their digits are masked (bounded work per text). */
const MAX_GROUPED_RUN = 160;

/** Mask the longest Luhn-valid window of 12-19 digits made of whole groups, from the left, windows not overlapping. */
function maskGroups(run: string): string {
  if (run.length > MAX_GROUPED_RUN) return run.replace(/\d/g, '*');
  // Digit groups, and what stands between each group and the next (the text is rebuilt from these).
  const groups: string[] = [];
  const separators: string[] = [];
  for (const token of run.match(TOKEN) ?? []) {
    if (/^\d/.test(token) && groups.length === separators.length) groups.push(token);
    else if (groups.length > separators.length) separators.push(token);
    else separators[separators.length - 1] += token;
  }
  const pieces: string[] = [];
  let i = 0;
  while (i < groups.length) {
    let end = -1;
    let digits = '';
    for (let j = i, total = ''; j < groups.length && (total += groups[j]).length <= 19; j++) {
      if (total.length >= 12 && luhnValid(total)) [end, digits] = [j, total];
    }
    if (end < 0) {
      pieces.push(groups[i] + (separators[i] ?? ''));
      i++;
    } else {
      pieces.push(masked(digits) + (separators[end] ?? ''));
      i = end + 1;
    }
  }
  return pieces.join('');
}

/** The leading `n` characters read as a decimal number (n <= 15), or -1 when shorter or not all digits. */
export function leadingNumber(digits: string, n: number): number {
  if (digits.length < n) return -1;
  let value = 0;
  for (let i = 0; i < n; i++) {
    const d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/** Brand by prefix (openapi.yaml CardValidationResult.cardBrand). */
export function cardBrand(digits: string): CardBrand {
  const first = leadingNumber(digits, 1);
  if (first < 0) return 'Unknown';
  if (first === 4) return 'Visa';
  const p2 = leadingNumber(digits, 2);
  const p3 = leadingNumber(digits, 3);
  const p4 = leadingNumber(digits, 4);
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return 'Mastercard';
  if (p2 === 34 || p2 === 37) return 'AmericanExpress';
  if (p4 === 6011 || p2 === 65) return 'Discover';
  if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38) return 'DinersClub';
  if (p4 >= 3528 && p4 <= 3589) return 'JCB';
  return 'Unknown';
}

export function brandLengthValid(brand: CardBrand, length: number): boolean {
  return brand !== 'Unknown' && BRAND_LENGTHS[brand].includes(length);
}

/**
 * Validate a card number: `valid` = Luhn passes, brand recognised and a length the brand issues. What openapi.yaml's
 * CardValidationRequest admits (1-64 characters with a digit) is all the operation passes here; anything else still
 * gets a verdict (no digits: not valid, no last four).
 */
export function validateCard(input: string, bin: BinLookup): CardResult {
  const digits = sanitiseCardNumber(input);
  const luhn = luhnValid(digits);
  const brand = cardBrand(digits);
  const entry = bin.lookup(digits);
  return {
    valid: luhn && brandLengthValid(brand, digits.length),
    luhnValid: luhn,
    cardBrand: brand,
    lastFourDigits: digits.slice(-4),
    cardType: entry?.cardType ?? null,
    issuingBank: entry?.issuingBank ?? null,
    cardCountry: entry?.cardCountry ?? null,
    cardCategory: null,
  };
}
