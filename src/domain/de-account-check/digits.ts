// Shared arithmetic of the German account check methods (Deutsche Bundesbank, "Prüfzifferberechnungsmethoden").
//
// Every method works on the 10-digit account number (left-padded with zeros, as the German BBAN carries it).
// Positions are the publication's: 1 is the leftmost digit, 10 the rightmost.

/** What one method says about an account: right, wrong, or not checkable (the method exempts the number). */
export type MethodResult = 'valid' | 'invalid' | 'unchecked';

/** One method: the 10-digit account in, its verdict out. */
export type AccountMethod = (account: string) => MethodResult;

/** The digit at a 1-based position of the 10-digit account. */
export const at = (account: string, position: number): number => account.charCodeAt(position - 1) - 48;

/** Sum of the decimal digits of a product (the publication's "Quersumme"; products stay below 100). */
export const crossSum = (n: number): number => (n >= 10 ? Math.floor(n / 10) + (n % 10) : n);

/**
 * Σ digit × weight over positions `from`..`to`, weighted from the right: position `to` takes weights[0], the one left
 * of it weights[1], and so on, the weights repeating. `map` turns each product into its summand (cross sum, unit digit).
 */
export function weightedFromRight(
  account: string,
  from: number,
  to: number,
  weights: readonly number[],
  map: (product: number) => number = (p) => p,
): number {
  let sum = 0;
  for (let pos = to, i = 0; pos >= from; pos--, i++) sum += map(at(account, pos) * weights[i % weights.length]);
  return sum;
}

/** Modulus 10: the unit digit of the sum subtracted from 10, a result of 10 read as 0. */
export const mod10Digit = (sum: number): number => (10 - (sum % 10)) % 10;

/** Modulus 11 as in method 06: 11 minus the remainder, remainders 0 and 1 giving 0. */
export const mod11Digit = (sum: number): number => {
  const rest = sum % 11;
  return rest <= 1 ? 0 : 11 - rest;
};

/** Modulus 11 as in method 02: remainder 0 gives 0, remainder 1 leaves no usable check digit (null). */
export const mod11StrictDigit = (sum: number): number | null => {
  const rest = sum % 11;
  return rest === 0 ? 0 : rest === 1 ? null : 11 - rest;
};

export const verdict = (ok: boolean): MethodResult => (ok ? 'valid' : 'invalid');

/** The account as the method would see it had the bank's two-digit sub-account "00" been left off (shifted left). */
export const withSubAccount00 = (account: string): string => `${account.slice(2)}00`;
