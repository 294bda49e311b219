// German account numbers checked with their bank's method (Deutsche Bundesbank, "Prüfzifferberechnungsmethoden",
// the methods published with the bank sort code file). Which method each bank code uses: bank-methods.ts.
import type { AccountMethod, MethodResult } from './digits.js';
import * as m10 from './modulus10.js';
import * as m11 from './modulus11.js';
import * as mv from './variants.js';

export type { MethodResult } from './digits.js';

/** The implemented methods by their Bundesbank id. */
const METHODS: ReadonlyMap<string, AccountMethod> = new Map<string, AccountMethod>([
  ['00', m10.method00],
  ['01', m10.method01],
  ['02', m11.method02],
  ['03', m10.method03],
  ['04', m11.method04],
  ['05', m10.method05],
  ['06', m11.method06],
  ['07', m11.method07],
  ['08', m10.method08],
  ['09', m10.method09],
  ['10', m11.method10],
  ['11', m11.method11],
  ['13', m10.method13],
  ['16', m11.method16],
  ['17', m11.method17],
  ['18', m10.method18],
  ['19', m11.method19],
  ['20', m11.method20],
  ['21', m10.method21],
  ['22', m10.method22],
  ['24', m11.method24],
  ['25', m11.method25],
  ['26', m11.method26],
  ['28', m11.method28],
  ['30', m10.method30],
  ['32', m11.method32],
  ['33', m11.method33],
  ['34', m11.method34],
  ['38', m11.method38],
  ['40', m11.method40],
  ['42', m11.method42],
  ['44', m11.method44],
  ['46', m11.method46],
  ['48', m11.method48],
  ['49', mv.method49],
  ['50', m11.method50],
  ['56', m11.method56],
  ['60', m10.method60],
  ['61', m10.method61],
  ['63', m10.method63],
  ['64', m11.method64],
  ['65', m10.method65],
  ['67', m10.method67],
  ['68', m10.method68],
  ['76', m11.method76],
  ['88', m11.method88],
  ['91', m11.method91],
  ['92', m10.method92],
  ['95', m11.method95],
  ['99', m11.method99],
  ['A2', mv.methodA2],
  ['A3', mv.methodA3],
  ['A7', mv.methodA7],
  ['B1', mv.methodB1],
  ['B2', mv.methodB2],
  ['D8', mv.methodD8],
]);

/** The ids of the implemented methods, sorted. */
export const IMPLEMENTED_METHODS: readonly string[] = [...METHODS.keys()].sort();

/**
 * The verdict of method `method` on a German account number (the 10 digits of the BBAN after the bank code), or
 * null when the method is not implemented. 'unchecked': the method exempts this number (method 09, ranges).
 */
export function checkGermanAccount(method: string, account: string): MethodResult | null {
  if (!/^[0-9]{10}$/.test(account)) return 'invalid';
  const run = METHODS.get(method);
  return run === undefined ? null : run(account);
}
