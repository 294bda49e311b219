// IBAN structure per country (ISO 13616, SWIFT IBAN Registry): the BBAN format in the registry's own notation.
import { BBAN_ALIASES } from './iban-bban.js';

/**
 * The BBAN format of every country in the SWIFT IBAN Registry (release 100), in its notation: a length, `!` for
 * fixed length, then n (digits), a (upper-case letters) or c (letters and digits, upper-cased by normalisation).
 * The French territories and AX use their parent's format (iban-bban.ts BBAN_ALIASES); GB's included
 * territories (GG, IM, JE) issue GB IBANs and have no entry.
 */
const REGISTRY: Readonly<Record<string, string>> = {
  AD: '4!n4!n12!c', AE: '3!n16!n', AL: '8!n16!c', AT: '5!n11!n',
  AZ: '4!a20!c', BA: '3!n3!n8!n2!n', BE: '3!n7!n2!n', BG: '4!a4!n2!n8!c',
  BH: '4!a14!c', BI: '5!n5!n11!n2!n', BR: '8!n5!n10!n1!a1!c', BY: '4!c4!n16!c',
  CH: '5!n12!c', CR: '4!n14!n', CY: '3!n5!n16!c', CZ: '4!n6!n10!n',
  DE: '8!n10!n', DJ: '5!n5!n11!n2!n', DK: '4!n9!n1!n', DO: '4!c20!n',
  EE: '2!n2!n11!n1!n', EG: '4!n4!n17!n', ES: '4!n4!n1!n1!n10!n', FI: '3!n11!n',
  FK: '2!a12!n', FO: '4!n9!n1!n', FR: '5!n5!n11!c2!n', GB: '4!a6!n8!n',
  GE: '2!a16!n', GI: '4!a15!c', GL: '4!n9!n1!n', GR: '3!n4!n16!c',
  GT: '4!c20!c', HN: '4!a20!n', HR: '7!n10!n', HU: '3!n4!n1!n15!n1!n',
  IE: '4!a6!n8!n', IL: '3!n3!n13!n', IQ: '4!a3!n12!n', IS: '4!n2!n6!n10!n',
  IT: '1!a5!n5!n12!c', JO: '4!a4!n18!c', KW: '4!a22!c', KZ: '3!n13!c',
  LB: '4!n20!c', LC: '4!a24!c', LI: '5!n12!c', LT: '5!n11!n',
  LU: '3!n13!c', LV: '4!a13!c', LY: '3!n3!n15!n', MC: '5!n5!n11!c2!n',
  MD: '2!c18!c', ME: '3!n13!n2!n', MK: '3!n10!c2!n', MN: '4!n12!n',
  MR: '5!n5!n11!n2!n', MT: '4!a5!n18!c', MU: '4!a2!n2!n12!n3!n3!a', NI: '4!a20!n',
  NL: '4!a10!n', NO: '4!n6!n1!n', OM: '3!n16!c', PK: '4!a16!c',
  PL: '8!n16!n', PS: '4!a21!c', PT: '4!n4!n11!n2!n', QA: '4!a21!c',
  RO: '4!a16!c', RS: '3!n13!n2!n', RU: '9!n5!n15!c', SA: '2!n18!c',
  SC: '4!a2!n2!n16!n3!a', SD: '2!n12!n', SE: '3!n16!n1!n', SI: '5!n8!n2!n',
  SK: '4!n6!n10!n', SM: '1!a5!n5!n12!c', SO: '4!n3!n12!n', ST: '4!n4!n11!n2!n',
  SV: '4!a20!n', TL: '3!n14!n2!n', TN: '2!n3!n13!n2!n', TR: '5!n1!n16!c',
  UA: '6!n19!c', VA: '3!n15!n', VG: '4!a16!n', XK: '4!n10!n2!n',
  YE: '4!a4!n18!c',
};

/**
 * Countries outside the registry whose national IBANs are in use (published by their central banks and listed by
 * iban.com's "experimental" table): same notation. BCEAO (UEMOA: BF, BJ, CI, GW, ML, NE, SN, TG): the 5-character
 * bank code is the country's letter code then digits since the 2010s reform (CI008), one letter then four digits
 * before (A0006); both are accepted. BEAC (CEMAC: CF, CG, CM, GA, GQ, TD), KM, MG: the RIB, all digits.
 */
const NATIONAL: Readonly<Record<string, string>> = {
  AO: '21!n', CV: '21!n', DZ: '22!n', IR: '22!n', MA: '24!n', MZ: '21!n',
  BF: '1!a1!c22!n', BJ: '1!a1!c22!n', CI: '1!a1!c22!n', ML: '1!a1!c22!n',
  NE: '1!a1!c22!n', SN: '1!a1!c22!n', TG: '1!a1!c22!n', GW: '1!a1!c19!n',
  CF: '23!n', CG: '23!n', CM: '23!n', GA: '23!n', GQ: '23!n', TD: '23!n', KM: '23!n', MG: '23!n',
};

const CLASS: Readonly<Record<string, string>> = { n: '[0-9]', a: '[A-Z]', c: '[A-Z0-9]' };

export interface IbanFormat {
  /** The whole IBAN's length. */
  length: number;
  /** The BBAN pattern, anchored. */
  bban: RegExp;
  /** The registry notation it was compiled from. */
  notation: string;
  /** In the SWIFT IBAN Registry (false: a national format from outside it). */
  registry: boolean;
}

/** Compile a registry notation such as `4!a6!n8!n` (every field is fixed-length in the registry). */
export function compileNotation(notation: string): { length: number; pattern: RegExp } {
  let length = 0;
  let source = '';
  for (const [, n, kind] of notation.matchAll(/(\d+)!([nac])/g)) {
    length += Number(n);
    source += `${CLASS[kind]}{${n}}`;
  }
  return { length, pattern: new RegExp(`^${source}$`) };
}

function compile(notation: string, registry: boolean): IbanFormat {
  const { length, pattern } = compileNotation(notation);
  return { length: length + 4, bban: pattern, notation, registry };
}

const FORMATS: ReadonlyMap<string, IbanFormat> = new Map([
  ...Object.entries(REGISTRY).map(([c, n]): [string, IbanFormat] => [c, compile(n, true)]),
  ...Object.entries(BBAN_ALIASES).map(([c, parent]): [string, IbanFormat] => [c, compile(REGISTRY[parent], true)]),
  ...Object.entries(NATIONAL).map(([c, n]): [string, IbanFormat] => [c, compile(n, false)]),
]);

/** The IBAN format of a country code, or undefined when no IBAN is issued under it. */
export function ibanFormat(countryCode: string): IbanFormat | undefined {
  return FORMATS.get(countryCode);
}

/** Every country code an IBAN can carry, sorted. */
export const IBAN_COUNTRIES: readonly string[] = [...FORMATS.keys()].sort();
