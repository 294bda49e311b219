// IBAN verdict: ISO 13616 structure per the SWIFT IBAN Registry, ISO 7064 MOD 97-10 check digits, national checks.
import { ibanFormat } from './iban-registry.js';
import { type CheckMethodOf, germanCheckMethod, mod97, type NationalCheck, nationalCheck } from './iban-national.js';

export interface IbanVerdict {
  valid: boolean;
  /** The national check's outcome; not-applicable also when structure or MOD 97 failed first (it is not run). */
  nationalCheck: NationalCheck;
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/**
 * The verdict on an IBAN in electronic format (upper case, no separators): a known country, the country's length,
 * its BBAN format (iban-registry.ts), two check digits that make the rearranged IBAN ≡ 1 mod 97, and the national
 * check digits where the BBAN carries them (iban-national.ts; German accounts by their bank's method through
 * `methodOf`). Check digits 00, 01 and 99, which ISO 13616 never issues, are the caller's concern (domain/iban.ts).
 */
export function ibanVerdict(iban: string, methodOf: CheckMethodOf = germanCheckMethod): IbanVerdict {
  const notRun: IbanVerdict = { valid: false, nationalCheck: 'not-applicable' };
  const format = ibanFormat(iban.slice(0, 2));
  if (format === undefined || iban.length !== format.length) return notRun;
  const bban = iban.slice(4);
  if (!format.bban.test(bban)) return notRun;
  if (!isDigit(iban.charCodeAt(2)) || !isDigit(iban.charCodeAt(3))) return notRun;
  if (mod97(iban.slice(0, 4), mod97(bban)) !== 1) return notRun;
  const national = nationalCheck(iban.slice(0, 2), bban, methodOf);
  return { valid: national !== 'failed', nationalCheck: national };
}

/** Whether the IBAN passes ibanVerdict. */
export function ibanStructureAndChecksumValid(iban: string, methodOf: CheckMethodOf = germanCheckMethod): boolean {
  return ibanVerdict(iban, methodOf).valid;
}
