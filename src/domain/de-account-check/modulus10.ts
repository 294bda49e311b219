// German account check methods of the modulus 10 family (Deutsche Bundesbank, "Prüfzifferberechnungsmethoden").
import {
  type AccountMethod,
  at,
  crossSum,
  mod10Digit,
  verdict,
  weightedFromRight,
  withSubAccount00,
} from './digits.js';

const unit = (p: number): number => p % 10;

/** Positions 1-9 weighted 2, 1, 2, ... from the right, each product's cross sum added; check digit position 10. */
const plain = (weights: readonly number[], cross: boolean, from = 1): AccountMethod => (account) =>
  verdict(mod10Digit(weightedFromRight(account, from, 9, weights, cross ? crossSum : undefined)) === at(account, 10));

/** 00: modulus 10, weights 2, 1, 2, 1, ... with cross sums (the Luhn rule over the 10-digit account). */
export const method00 = plain([2, 1], true);
/** 01: modulus 10, weights 3, 7, 1 from the right, no cross sums. */
export const method01 = plain([3, 7, 1], false);
/** 03: as 01 with weights 2, 1. */
export const method03 = plain([2, 1], false);
/** 05: as 01 with weights 7, 3, 1. */
export const method05 = plain([7, 3, 1], false);
/** 18: as 01 with weights 3, 9, 7, 1. */
export const method18 = plain([3, 9, 7, 1], false);
/** 60: as 00 over positions 3-9 (positions 1 and 2 not included). */
export const method60 = plain([2, 1], true, 3);

/** 08: as 00, from account number 60000 up; smaller numbers are not checked. */
export const method08: AccountMethod = (account) => (Number(account) < 60000 ? 'unchecked' : method00(account));

/** 21: as 00, but the sum is cross-summed until one digit is left; that digit taken from 10 is the check digit. */
export const method21: AccountMethod = (account) => {
  let sum = weightedFromRight(account, 1, 9, [2, 1], crossSum);
  while (sum >= 10) sum = [...String(sum)].reduce((acc, ch) => acc + Number(ch), 0);
  return verdict((10 - sum) % 10 === at(account, 10));
};

/** 22: weights 3, 1 from the right; only each product's unit digit counts. */
export const method22: AccountMethod = (account) =>
  verdict(mod10Digit(weightedFromRight(account, 1, 9, [3, 1], unit)) === at(account, 10));

/**
 * The customer number in positions 2-7, weights 2, 1, 2, ... from the right with cross sums, check digit in
 * position 8; positions 9-10 are a sub-account outside the calculation.
 */
const customerNumber = (account: string): boolean =>
  mod10Digit(weightedFromRight(account, 2, 7, [2, 1], crossSum)) === at(account, 8);

/**
 * 13: the customer number rule above; when it fails, a second calculation with the sub-account "00" assumed to
 * have been left off (the number shifted two places to the left).
 */
export const method13: AccountMethod = (account) =>
  verdict(customerNumber(account) || (account.startsWith('00') && customerNumber(withSubAccount00(account))));

/**
 * 63: as 13, but position 1 is always 0 (else wrong); a number written with three leading zeros is the customer
 * number in positions 4-9 and the check digit in position 10 (the sub-account "00" left off).
 */
export const method63: AccountMethod = (account) => {
  if (account[0] !== '0') return 'invalid';
  return verdict(customerNumber(account) || (account.startsWith('000') && customerNumber(withSubAccount00(account))));
};

/**
 * 61: positions 1-7 weighted 2, 1, 2, 1, 2, 1, 2 from the left with cross sums, check digit in position 8. When
 * position 9 is 8, positions 9 and 10 join the calculation with the weights 1 and 2.
 */
export const method61: AccountMethod = (account) => {
  let sum = weightedFromRight(account, 1, 7, [2, 1], crossSum);
  if (at(account, 9) === 8) sum += crossSum(at(account, 9) * 1) + crossSum(at(account, 10) * 2);
  return verdict(mod10Digit(sum) === at(account, 8));
};

/**
 * 68: account numbers of 6 to 10 digits. Ten digits: position 4 must be 9, positions 4-9 weighted 2, 1, ... from
 * the right with cross sums, check digit position 10. Nine digits from 400000000 to 499999999 are not checked.
 * Six to nine digits: variant 1 as 00 over positions 1-9; when it fails, variant 2 leaves positions 3 and 4 out.
 */
export const method68: AccountMethod = (account) => {
  if (Number(account) < 100000) return 'invalid';
  if (account[0] !== '0') {
    if (at(account, 4) !== 9) return 'invalid';
    return verdict(mod10Digit(weightedFromRight(account, 4, 9, [2, 1], crossSum)) === at(account, 10));
  }
  if (account[1] === '4') return 'unchecked';
  if (method00(account) === 'valid') return 'valid';
  // Positions 5-9 weighted 2, 1, 2, 1, 2 from the right, then position 2 with weight 1.
  const sum = weightedFromRight(account, 5, 9, [2, 1], crossSum) + at(account, 2);
  return verdict(mod10Digit(sum) === at(account, 10));
};

/** 09: no check digit calculation. */
export const method09: AccountMethod = () => 'unchecked';

/** 30: positions 1-9 weighted 2, 0, 0, 0, 0, 1, 2, 1, 2 from the left, no cross sums. */
export const method30: AccountMethod = (account) =>
  verdict(mod10Digit(weightedFromRight(account, 1, 9, [2, 1, 2, 1, 0, 0, 0, 0, 2])) === at(account, 10));
/** 67: positions 1-7 as 00 (weights 2, 1, ... from the right, cross sums), check digit position 8. */
export const method67: AccountMethod = (account) =>
  verdict(mod10Digit(weightedFromRight(account, 1, 7, [2, 1], crossSum)) === at(account, 8));
/** 92: positions 4-9 weighted 3, 7, 1 from the right, no cross sums, check digit position 10. */
export const method92: AccountMethod = (account) =>
  verdict(mod10Digit(weightedFromRight(account, 4, 9, [3, 7, 1])) === at(account, 10));

/**
 * 65: positions 1-7 weighted 2, 1, 2, 1, 2, 1, 2 from the left with cross sums, check digit position 8. When
 * position 9 is 9, positions 9 and 10 join the calculation with the weights 1 and 2.
 */
export const method65: AccountMethod = (account) => {
  let sum = weightedFromRight(account, 1, 7, [2, 1], crossSum);
  if (at(account, 9) === 9) sum += at(account, 9) + crossSum(at(account, 10) * 2);
  return verdict(mod10Digit(sum) === at(account, 8));
};
