// The compiled IBAN check gives ibantools' own verdict (ISO 13616 structure, ISO 7064 MOD 97-10), input by input.
import fc from 'fast-check';
import { countrySpecs, validateIBAN } from 'ibantools';
import { describe, expect, it } from 'vitest';
import { ibanStructureAndChecksumValid } from '../../src/domain/iban-check.js';

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const countries = Object.keys(countrySpecs).sort();
const sized = countries.filter((c) => countrySpecs[c].chars);

/** MOD 97-10 check digits for a country and BBAN, as ISO 13616 computes them. */
function withCheckDigits(country: string, bban: string): string {
  let rest = 0;
  for (const ch of `${bban}${country}00`) {
    const v = parseInt(ch, 36);
    rest = (v > 9 ? rest * 100 + v : rest * 10 + v) % 97;
  }
  return `${country}${String(98 - rest).padStart(2, '0')}${bban}`;
}

/** A BBAN of digits only or of A-Z0-9, of the country's length or one off. */
const bbanFor = (country: string) =>
  fc.constantFrom('0123456789', ALNUM).chain((alphabet) =>
    fc
      .array(fc.constantFrom(...alphabet), {
        minLength: (countrySpecs[country].chars ?? 6) - 5,
        maxLength: (countrySpecs[country].chars ?? 6) - 3,
      })
      .map((chars) => chars.join('')),
  );

const oracle = (iban: string) => validateIBAN(iban).valid;

describe('ibanStructureAndChecksumValid', () => {
  it.each([
    ['a registry example', 'DE89370400440532013000'],
    ['a national check (BE)', 'BE68539007547034'],
    ['a national check broken (BE)', 'BE68539007547035'],
    ['French RIB key', 'FR1420041010050500013M02606'],
    ['check digits 00 with a passing MOD 97 remainder', 'GB00NWBK60161331926819'],
    ['check digits 97 on an IBAN that needs 98', 'DE97370400440532013000'],
    ['unknown country', 'ZZ89370400440532013000'],
    ['a country outside the IBAN registry that ibantools still knows (AO)', 'AO06004400006729503010102'],
    ['a country ibantools lists without a length or pattern (US)', 'US12345678901234567890'],
    ['letters where the check digits belong', 'DEAB370400440532013000'],
    ['a letter in a numeric BBAN', 'DE89370400440532O13000'],
    ['too short', 'DE8937040044053201300'],
    ['empty', ''],
  ])('%s: %s gives the verdict ibantools gives', (_label, iban) => {
    expect(ibanStructureAndChecksumValid(iban)).toBe(oracle(iban));
  });

  it('agrees with ibantools on generated IBANs of every country, with correct and random check digits', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...sized).chain((c) => fc.tuple(fc.constant(c), bbanFor(c), fc.integer({ min: 0, max: 99 }), fc.boolean())),
        ([country, bban, digits, computed]) => {
          const iban = computed ? withCheckDigits(country, bban) : `${country}${String(digits).padStart(2, '0')}${bban}`;
          const verdict = ibanStructureAndChecksumValid(iban);
          expect(verdict).toBe(oracle(iban));
          if (verdict) accepted++;
        },
      ),
      { numRuns: 20_000 },
    );
    // Both verdicts are exercised: a fair share of the generated IBANs is valid.
    expect(accepted).toBeGreaterThan(1000);
  });

  it('agrees with ibantools on every single-character change of every country example it accepts', () => {
    let compared = 0;
    for (const country of sized) {
      const example = withCheckDigits(country, '0'.repeat((countrySpecs[country].chars ?? 4) - 4));
      for (let i = 0; i < example.length; i++) {
        for (const ch of ['0', '7', 'A', 'Z']) {
          const changed = example.slice(0, i) + ch + example.slice(i + 1);
          expect(ibanStructureAndChecksumValid(changed), changed).toBe(oracle(changed));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(5000);
  });
});
