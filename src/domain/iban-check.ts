// IBAN verdict: ISO 13616 structure per the SWIFT IBAN Registry, ISO 7064 MOD 97-10 check digits, national checks.
import { ibanFormat } from './iban-registry.js';
import { mod97, nationalCheckPasses } from './iban-national.js';

/**
 * Whether an IBAN in electronic format (upper case, no separators) is valid: a known country, the country's
 * length, its BBAN format (iban-registry.ts), two check digits that make the rearranged IBAN ≡ 1 mod 97, and the
 * national check digits where the BBAN carries them (iban-national.ts). Check digits 00, 01 and 99, which
 * ISO 13616 never issues, are the caller's concern (domain/iban.ts).
 */
export function ibanStructureAndChecksumValid(iban: string): boolean {
  const format = ibanFormat(iban.slice(0, 2));
  if (format === undefined || iban.length !== format.length) return false;
  const bban = iban.slice(4);
  if (!format.bban.test(bban)) return false;
  if (!/^[0-9]{2}$/.test(iban.slice(2, 4))) return false;
  if (mod97(bban + iban.slice(0, 4)) !== 1) return false;
  return nationalCheckPasses(iban.slice(0, 2), bban);
}
