// German account check methods made of other methods tried in turn (Deutsche Bundesbank,
// "Prüfzifferberechnungsmethoden"): the account is right when one variant finds it right.
import type { AccountMethod } from './digits.js';
import { method00, method01, method03, method05 } from './modulus10.js';
import { method02, method04, method10 } from './modulus11.js';

const either = (first: AccountMethod, second: AccountMethod): AccountMethod => (account) =>
  first(account) === 'valid' ? 'valid' : second(account);

/** A2: variant 1 as method 00; when it fails, variant 2 as method 04. */
export const methodA2 = either(method00, method04);
/** A3: variant 1 as method 00; when it fails, variant 2 as method 10. */
export const methodA3 = either(method00, method10);

/** 49: variant 1 as method 00; when it fails, variant 2 as method 01. */
export const method49 = either(method00, method01);
/** A7: variant 1 as method 00; when it fails, variant 2 as method 03. */
export const methodA7 = either(method00, method03);
/** B1: variant 1 as method 05; when it fails, variant 2 as method 01; then variant 3 as method 00. */
export const methodB1 = either(method05, either(method01, method00));
/** B2: first digit 0-7: method 02; 8 or 9: method 00. */
export const methodB2: AccountMethod = (account) => (account[0] >= '8' ? method00(account) : method02(account));
/** D8: a first digit 1-9: method 00; 0010000000-0099999999 are not checked; other numbers are wrong. */
export const methodD8: AccountMethod = (account) => {
  if (account[0] !== '0') return method00(account);
  return account[1] === '0' && account[2] !== '0' ? 'unchecked' : 'invalid';
};
