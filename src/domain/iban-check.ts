// IBAN verdict (ISO 13616 structure, ISO 7064 MOD 97-10 check digits) on ibantools' country registry, compiled once.
import { countrySpecs } from 'ibantools';

/**
 * The verdict ibantools' `validateIBAN(iban).valid` gives, for an IBAN in electronic format (upper case, no
 * separators): the country's length, its BBAN pattern, its national check (BE, ES, FR, ... where ibantools has
 * one), two check digits and the MOD 97-10 checksum computed as ibantools does (98 - (BBAN + country + "00")
 * mod 97 equals the check digits). ibantools rebuilds the BBAN RegExp and spells the number out as a string on
 * every call (~4 us of a ~90 us request); here the patterns are compiled once and the remainder is folded in
 * place. test/unit/iban-check.test.ts holds the two to the same verdict over the registry and generated inputs.
 */
export function ibanStructureAndChecksumValid(iban: string): boolean {
  const country = iban.slice(0, 2);
  const rule = rules.get(country);
  if (rule === undefined || iban.length !== rule.chars) return false;
  const bban = iban.slice(4);
  if (!rule.bban.test(bban)) return false;
  const national = countrySpecs[country]?.bban_validation_func; // read per call: ibantools lets callers replace it
  if (national && !national(bban)) return false;
  const d1 = iban.charCodeAt(2) - 48;
  const d2 = iban.charCodeAt(3) - 48;
  if (d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return false;
  let rest = 0;
  for (let i = 4; i < iban.length; i++) rest = fold(rest, iban.charCodeAt(i));
  rest = fold(fold(rest, iban.charCodeAt(0)), iban.charCodeAt(1));
  rest = (rest * 100) % 97; // the "00" placeholder
  return 98 - rest === d1 * 10 + d2;
}

interface Rule {
  chars: number;
  bban: RegExp;
}

/** Countries ibantools can validate: those with a length and a BBAN pattern (the others are never valid). */
const rules: ReadonlyMap<string, Rule> = new Map(
  Object.entries(countrySpecs).flatMap(([country, spec]): [string, Rule][] =>
    spec.chars && spec.bban_regexp ? [[country, { chars: spec.chars, bban: new RegExp(spec.bban_regexp) }]] : [],
  ),
);

/** Append one IBAN character to a remainder mod 97: a digit as itself, a letter A-Z as 10-35 (two digits). */
function fold(rest: number, code: number): number {
  return code >= 65 ? (rest * 100 + (code - 55)) % 97 : (rest * 10 + (code - 48)) % 97;
}
