// German account check methods of the modulus 11 family (Deutsche Bundesbank, "Prüfzifferberechnungsmethoden").
import {
  type AccountMethod,
  at,
  crossSum,
  mod11Digit,
  mod11StrictDigit,
  verdict,
  weightedFromRight,
  withSubAccount00,
} from './digits.js';

const W2_7 = [2, 3, 4, 5, 6, 7];
const W2_10 = [2, 3, 4, 5, 6, 7, 8, 9, 10];

/**
 * Weighted from the right over positions `from`..`check - 1`, check digit in position `check`; remainders 0 and 1
 * give the check digit 0 (method 06's rule).
 */
const loose = (weights: readonly number[], from = 1, check = 10): AccountMethod => (account) =>
  verdict(mod11Digit(weightedFromRight(account, from, check - 1, weights)) === at(account, check));

/** As `loose` over positions 1-9, but remainder 1 leaves no usable check digit: such an account is wrong (02's rule). */
const strict = (weights: readonly number[]): AccountMethod => (account) => {
  const digit = mod11StrictDigit(weightedFromRight(account, 1, 9, weights));
  return verdict(digit !== null && digit === at(account, 10));
};

/** 02: weights 2, 3, 4, 5, 6, 7, 8, 9, 2; remainder 1 makes the account unusable. */
export const method02 = strict([2, 3, 4, 5, 6, 7, 8, 9]);
/** 04: as 02 with weights 2, 3, 4, 5, 6, 7, 2, 3, 4. */
export const method04 = strict(W2_7);
/** 07: as 02 with weights 2 to 10. */
export const method07 = strict(W2_10);
/** 06: weights 2, 3, 4, 5, 6, 7, 2, 3, 4; remainders 0 and 1 give 0. */
export const method06 = loose(W2_7);
/** 10: as 06 with weights 2 to 10. */
export const method10 = loose(W2_10);
/** 19: as 06 with weights 2, 3, 4, 5, 6, 7, 8, 9, 1. */
export const method19 = loose([2, 3, 4, 5, 6, 7, 8, 9, 1]);
/** 20: as 06 with weights 2, 3, 4, 5, 6, 7, 8, 9, 3. */
export const method20 = loose([2, 3, 4, 5, 6, 7, 8, 9, 3]);
/** 28: positions 1-7 weighted 2 to 8, check digit position 8 (positions 9-10 a sub-account). */
export const method28 = loose([2, 3, 4, 5, 6, 7, 8], 1, 8);
/** 32: positions 4-9 weighted 2 to 7, check digit position 10. */
export const method32 = loose(W2_7, 4);
/** 33: positions 5-9 weighted 2 to 6, check digit position 10. */
export const method33 = loose([2, 3, 4, 5, 6], 5);
/** 34: positions 1-7 weighted 2, 4, 8, 5, 10, 9, 7, check digit position 8. */
export const method34 = loose([2, 4, 8, 5, 10, 9, 7], 1, 8);
/** 38: positions 4-9 weighted 2, 4, 8, 5, 10, 9, check digit position 10. */
export const method38 = loose([2, 4, 8, 5, 10, 9], 4);

/** 11: as 10, but remainder 1 gives the check digit 9. */
export const method11: AccountMethod = (account) => {
  const rest = weightedFromRight(account, 1, 9, W2_10) % 11;
  const digit = rest === 0 ? 0 : rest === 1 ? 9 : 11 - rest;
  return verdict(digit === at(account, 10));
};

/** 16: as 06, but with remainder 1 the check digit is two digits: positions 9 and 10 must then be equal. */
export const method16: AccountMethod = (account) => {
  const rest = weightedFromRight(account, 1, 9, W2_7) % 11;
  if (rest === 1) return verdict(at(account, 9) === at(account, 10));
  return verdict((rest === 0 ? 0 : 11 - rest) === at(account, 10));
};

/** 26: positions 1-7 weighted 2 to 7, check digit position 8; a number starting "00" is first shifted two places left. */
export const method26: AccountMethod = (account) =>
  loose(W2_7, 1, 8)(account.startsWith('00') ? withSubAccount00(account) : account);

/**
 * 76: position 1 the account type (0, 4, 6, 7, 8 or 9, else wrong), positions 2-7 the stem number weighted 2 to 7
 * from the right; the remainder itself is the check digit (position 8), remainder 10 unusable. Positions 9-10 are
 * a sub-account; when the first calculation fails, it is repeated with the sub-account "00" assumed left off.
 */
const stem76 = (account: string): boolean =>
  /^[046789]/.test(account) && weightedFromRight(account, 2, 7, W2_7) % 11 === at(account, 8);
export const method76: AccountMethod = (account) => {
  if (!/^[046789]/.test(account)) return 'invalid';
  return verdict(stem76(account) || (account.startsWith('00') && stem76(withSubAccount00(account))));
};

/** 88: positions 4-9 weighted 2 to 7, check digit position 10; when position 3 is 9, positions 3-9 weighted 2 to 8. */
export const method88: AccountMethod = (account) =>
  at(account, 3) === 9 ? loose([2, 3, 4, 5, 6, 7, 8], 3)(account) : loose(W2_7, 4)(account);

/** 99: as 06; account numbers 0396000000 to 0499999999 are not checked. */
export const method99: AccountMethod = (account) =>
  account >= '0396000000' && account <= '0499999999' ? 'unchecked' : method06(account);

/**
 * 95: as 06; not checked are 0000000001-0001999999, 0009000000-0025999999, 0396000000-0499999999,
 * 0700000000-0799999999 and 0910000000-0989999999.
 */
const EXEMPT95: readonly [string, string][] = [
  ['0000000001', '0001999999'],
  ['0009000000', '0025999999'],
  ['0396000000', '0499999999'],
  ['0700000000', '0799999999'],
  ['0910000000', '0989999999'],
];
export const method95: AccountMethod = (account) =>
  EXEMPT95.some(([lo, hi]) => account >= lo && account <= hi) ? 'unchecked' : method06(account);

/**
 * 17: positions 2-7 weighted 1, 2, 1, 2, 1, 2 from the left, cross sums of the products; 1 is taken from the sum,
 * the remainder mod 11 taken from 10 is the check digit (position 8); a result of 10 gives 0.
 */
export const method17: AccountMethod = (account) => {
  let sum = 0;
  for (let pos = 2; pos <= 7; pos++) sum += crossSum(at(account, pos) * (pos % 2 === 0 ? 1 : 2));
  const digit = 10 - ((sum - 1) % 11);
  return verdict((digit >= 10 ? 0 : digit) === at(account, 8));
};

/**
 * 24: positions 1-9 without leading zeros, weights 1, 2, 3, 1, 2, 3, ... from the left, each summand
 * (digit × weight + weight) mod 11; the sum's unit digit is the check digit (position 10). A first digit 3, 4, 5
 * or 6 counts as 0, and a first digit 9 makes positions 1-3 zeros, before the leading zeros are dropped.
 */
export const method24: AccountMethod = (account) => {
  let body = account.slice(0, 9);
  if ('3456'.includes(body[0])) body = `0${body.slice(1)}`;
  else if (body[0] === '9') body = `000${body.slice(3)}`;
  const significant = body.replace(/^0+/, '');
  let sum = 0;
  for (let i = 0; i < significant.length; i++) {
    const weight = (i % 3) + 1;
    sum += ((significant.charCodeAt(i) - 48) * weight + weight) % 11;
  }
  return verdict(sum % 10 === at(account, 10));
};

/**
 * 25: positions 2-9 weighted 2 to 9 from the right, check digit position 10 (11 minus the remainder, remainder 0
 * gives 0); remainder 1 gives 0 only when position 2 (the "Arbeitsziffer") is 8 or 9, else the account is wrong.
 */
export const method25: AccountMethod = (account) => {
  const rest = weightedFromRight(account, 2, 9, [2, 3, 4, 5, 6, 7, 8, 9]) % 11;
  if (rest === 1) return verdict(at(account, 10) === 0 && (at(account, 2) === 8 || at(account, 2) === 9));
  return verdict((rest === 0 ? 0 : 11 - rest) === at(account, 10));
};

/**
 * 91: check digit in position 7, four variants tried in turn (06's remainder rule): positions 1-6 weighted 2 to 7
 * from the right; 7 to 2 from the right; positions 1-6 and 8-10 weighted 2, 3, 4 (positions 10, 9, 8) and 5 to 10
 * (positions 6 to 1); positions 1-6 weighted 2, 4, 8, 5, 10, 9 from the right.
 */
export const method91: AccountMethod = (account) => {
  const check = at(account, 7);
  const six = (weights: readonly number[]) => mod11Digit(weightedFromRight(account, 1, 6, weights)) === check;
  const wide = () =>
    mod11Digit(weightedFromRight(account, 8, 10, [2, 3, 4]) + weightedFromRight(account, 1, 6, [5, 6, 7, 8, 9, 10])) === check;
  return verdict(six(W2_7) || six([7, 6, 5, 4, 3, 2]) || wide() || six([2, 4, 8, 5, 10, 9]));
};

/**
 * 50: positions 1-6 weighted 2 to 7 from the right, check digit position 7 (06's remainder rule); when that fails,
 * again with a three-digit sub-account "000" assumed left off (the number shifted three places left).
 */
const first50 = loose(W2_7, 1, 7);
export const method50: AccountMethod = (account) =>
  first50(account) === 'valid' || (account.startsWith('000') && first50(`${account.slice(3)}000`) === 'valid')
    ? 'valid'
    : 'invalid';

/** 40: positions 1-9 weighted 2, 4, 8, 5, 10, 9, 7, 3, 6 from the right, 06's remainder rule. */
export const method40 = loose([2, 4, 8, 5, 10, 9, 7, 3, 6]);
/** 42: positions 2-9 weighted 2 to 9 from the right, 06's remainder rule. */
export const method42 = loose([2, 3, 4, 5, 6, 7, 8, 9], 2);
/** 44: positions 5-9 weighted 2, 4, 8, 5, 10 from the right, 06's remainder rule. */
export const method44 = loose([2, 4, 8, 5, 10], 5);
/** 46: positions 3-7 weighted 2 to 6 from the right, check digit position 8 (positions 9-10 a sub-account). */
export const method46 = loose([2, 3, 4, 5, 6], 3, 8);
/** 48: positions 3-8 weighted 2 to 7 from the right, check digit position 9 (position 10 outside). */
export const method48 = loose(W2_7, 3, 9);
/** 64: positions 1-6 weighted 9, 10, 5, 8, 4, 2 from the left, check digit position 7. */
export const method64 = loose([2, 4, 8, 5, 10, 9], 1, 7);

/**
 * 56: positions 1-9 weighted 2 to 7 from the right (as 06), check digit 11 minus the remainder. Remainders 0 and 1
 * leave no check digit, except for ten-digit numbers beginning with 9, where remainder 1 gives 7 and 0 gives 8.
 */
export const method56: AccountMethod = (account) => {
  const rest = weightedFromRight(account, 1, 9, W2_7) % 11;
  if (rest <= 1) return verdict(account[0] === '9' && at(account, 10) === (rest === 1 ? 7 : 8));
  return verdict(11 - rest === at(account, 10));
};
