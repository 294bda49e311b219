// IBAN verdict rules, table-driven: registry structure per country (SWIFT IBAN Registry), ISO 7064 MOD 97-10 and
// the national check digits (CZ/SK, MK, the French RIB key and its territories, the Italian CIN, ...).
import { describe, expect, it } from 'vitest';
import { ibanStructureAndChecksumValid as valid } from '../../src/domain/iban-check.js';
import { compileNotation, IBAN_COUNTRIES, ibanFormat } from '../../src/domain/iban-registry.js';
import { NATIONAL_CHECK_COUNTRIES, nationalCheckPasses } from '../../src/domain/iban-national.js';

/** MOD 97-10 check digits for country + BBAN (written here with BigInt, apart from the service's fold). */
function withCheck(country: string, bban: string): string {
  const n = BigInt(`${bban}${country}00`.replace(/[A-Z]/g, (ch) => String(ch.charCodeAt(0) - 55)));
  return `${country}${String(98n - (n % 97n)).padStart(2, '0')}${bban}`;
}

describe('issue examples that were accepted and are not valid', () => {
  it.each([
    ['CZ: the account digits sum to 1 mod 11 (no check digit exists)', 'CZ8603007349115071897903'],
    ['SK: the same for a Slovak account', 'SK2020108232017632630467'],
    ['IT: wrong CIN', 'IT91X8564078620RF5HVEIUOXKU'],
  ])('%s: %s', (_label, iban) => {
    // Structure and MOD 97 are right: only the national check rejects it.
    expect(valid(iban)).toBe(false);
    expect(withCheck(iban.slice(0, 2), iban.slice(4))).toBe(iban);
  });

  it('CI: a current Ivorian IBAN (bank code two letters then digits) is valid', () => {
    expect(valid('CI93CI0080111301134291200589')).toBe(true);
  });
});

describe('registry structure (SWIFT IBAN Registry): one row per point where it differed', () => {
  // [label, country, BBAN, valid] with check digits computed, so only the structure decides.
  it.each([
    ['PK account may hold letters (16!c)', 'PK', 'SCBL000000112345670A', true],
    ['PK bank code is letters (4!a)', 'PK', '1CBL0000001123456702', false],
    ['PS account may hold letters (21!c)', 'PS', 'PALS00000000040012345670B', true],
    ['PS bank code is letters (4!a)', 'PS', 'PAL1000000000400123456702', false],
    ['BY bank code may hold digits (4!c)', 'BY', 'NB1B3600900000002Z00AB00', true],
    ['BY balance account is digits (4!n)', 'BY', 'NBRB36A0900000002Z00AB00', false],
    ['DO bank code may hold digits (4!c)', 'DO', 'BA1R00000001212453611324', true],
    ['DO account is digits (20!n)', 'DO', 'BAGR0000000121245361132A', false],
    ['IE bank code is letters (4!a)', 'IE', 'AIB193115212345678', false],
    ['IE registry layout', 'IE', 'AIBK93115212345678', true],
    ['VG bank code is letters (4!a)', 'VG', 'VPV10000012345678901', false],
    ['GE bank code is letters (2!a)', 'GE', 'N10000000101904917', false],
    ['GE registry layout', 'GE', 'NB0000000101904917', true],
    ['TR reserved character is a digit (1!n)', 'TR', '00061A0519786457841326', false],
    ['TR registry layout', 'TR', '000610519786457841326'.padStart(22, '0').slice(0, 22), true],
    ['CI old bank code: one letter then four digits', 'CI', 'A00060174100178530011852', true],
    ['CI digit first', 'CI', '1I0080111301134291200589', false],
    ['SN current bank code', 'SN', 'SN0100152000048500003035', true],
    ['CM (BEAC) is all digits', 'CM', 'A0005000010000000000001'.padEnd(23, '0'), false],
  ])('%s', (_label, country, bban, expected) => {
    expect(valid(withCheck(country, bban))).toBe(expected);
  });

  it('every country has a format whose length the registry notation gives', () => {
    for (const c of IBAN_COUNTRIES) {
      const f = ibanFormat(c)!;
      expect(f.length, c).toBe(compileNotation(f.notation).length + 4);
    }
  });

  it('GB territories (GG, IM, JE) issue GB IBANs: no format of their own', () => {
    for (const c of ['GG', 'IM', 'JE']) expect(ibanFormat(c)).toBeUndefined();
  });
});

describe('national formats outside the registry: the examples of iban.com\'s experimental list', () => {
  it.each([
    'AO06004400006729503010102',
    'BF42BF0840101300463574000390',
    'BJ66BJ0610100100144390000769',
    'BJ11B00610100400271101192591', // the former BCEAO bank code: one letter, four digits
    'CF4220001000010120069700160',
    'CG3930011000101013451300019',
    'CI93CI0080111301134291200589',
    'CM2110002000300277976315008',
    'CV64000500000020108215144',
    'DZ580002100001113000000570',
    'GQ7050002001003715228190196',
    'GW04GW1430010181800637601',
    'IR710570029971601460641001',
    'KM4600005000010010904400137',
    'MA64011519000001205000534921',
    'MG4600005030071289421016045',
    'ML13ML0160120102600100668497',
    'TD8960002000010271091600153',
  ])('%s is valid', (iban) => {
    expect(valid(iban)).toBe(true);
    expect(ibanFormat(iban.slice(0, 2))?.registry).toBe(false);
  });
});

describe('national checks', () => {
  it('covers the countries whose BBAN carries check digits', () => {
    expect(NATIONAL_CHECK_COUNTRIES).toEqual(
      ['AX', 'BA', 'BE', 'BL', 'CZ', 'DE', 'EE', 'ES', 'FI', 'FR', 'GF', 'GP', 'HR', 'HU', 'IS', 'IT', 'MC', 'ME', 'MF', 'MK', 'MQ', 'MR', 'NC', 'NO', 'PF', 'PL', 'PM', 'PT', 'RE', 'RS', 'SI', 'SK', 'SM', 'TF', 'TL', 'TN', 'WF', 'YT'],
    );
  });

  // [country, BBAN that passes, the same with one national digit changed]
  it.each([
    ['BA', '1290079401028494', '1290079401028495'],
    ['BE', '539007547034', '539007547035'],
    ['CZ', '08000000192000145399', '08000000192000145398'],
    ['EE', '2200221020145685', '2200221020145684'],
    ['ES', '21000418450200051332', '21000418460200051332'],
    ['FR', '20041010050500013M02606', '20041010050500013M02607'],
    ['HR', '10010051863000160', '10010051863000161'],
    ['HU', '117730161111101800000000', '117730171111101800000000'],
    ['IT', 'X0542811101000000123456', 'Y0542811101000000123456'],
    ['MC', '11222000010123456789030', '11222000010123456789031'],
    ['ME', '505000012345678951', '505000012345678952'],
    ['MK', '250120000058984', '250120000058985'],
    ['NO', '86011117947', '86011117948'],
    ['PL', '109010140000071219812874', '109010150000071219812874'],
    ['PT', '000201231234567890154', '000201231234567890155'],
    ['RS', '260005601001611379', '260005601001611378'],
    ['SI', '263300012039086', '263300012039087'],
    ['SK', '12000000198742637541', '12000000198742637542'],
    ['SM', 'U0322509800000000270100', 'V0322509800000000270100'],
  ])('%s: %s passes, %s does not (MOD 97 recomputed)', (country, good, bad) => {
    expect(nationalCheckPasses(country, good)).toBe(true);
    expect(nationalCheckPasses(country, bad)).toBe(false);
    expect(valid(withCheck(country, good))).toBe(true);
    expect(valid(withCheck(country, bad))).toBe(false);
  });

  it('CZ and SK: the prefix is checked too, and a prefix summing to 1 mod 11 has no valid check digit', () => {
    // Prefix 000019: 1×2 + 9×1 = 11 ≡ 0 mod 11; with its check digit changed to 8 it fails.
    expect(nationalCheckPasses('CZ', '08000000192000145399')).toBe(true);
    expect(nationalCheckPasses('CZ', '08000000182000145399')).toBe(false);
    // Prefix digits 00001 (weights 10,5,8,4,2): sum 2; 00006: 12 ≡ 1 mod 11, so no check digit 0-9 works.
    for (let d = 0; d <= 9; d++) expect(nationalCheckPasses('SK', `1200000006${d}0000000000`)).toBe(false);
  });

  it('MK: letters in the account count as 10..35 (ISO 7064), not as a truncated number', () => {
    // Key computed over the letters as ISO 7064 reads them: valid.
    const body = '2501234ABCDE0';
    const n = BigInt(`${body}00`.replace(/[A-Z]/g, (ch) => String(ch.charCodeAt(0) - 55)));
    const key = String(98n - (n % 97n)).padStart(2, '0');
    expect(valid(withCheck('MK', body + key))).toBe(true);
    // Key computed from the digits before the first letter (what parseInt read): invalid.
    const truncated = String(98 - Number((BigInt('2501234') * 100n) % 97n)).padStart(2, '0');
    expect(truncated).not.toBe(key);
    expect(valid(withCheck('MK', body + truncated))).toBe(false);
  });

  it.each(['GP', 'RE', 'MQ', 'GF', 'YT', 'NC', 'PF', 'PM', 'TF', 'WF', 'BL', 'MF'])(
    '%s: the French RIB key is checked',
    (country) => {
      expect(valid(withCheck(country, '20041010050500013M02606'))).toBe(true);
      expect(valid(withCheck(country, '20041010050500013M02607'))).toBe(false);
    },
  );

  it('FR: a RIB key of 00 is never issued (the key runs 01..97)', () => {
    // Bank 00000, branch 00000, account 00000000000: 89×0 + 15×0 + 3×0 ≡ 0, key 97; "00" satisfies the
    // concatenated mod 97 too, but no bank issues it.
    expect(valid(withCheck('FR', '0000000000000000000097'.padStart(23, '0')))).toBe(true);
    expect(valid(withCheck('FR', '00000000000000000000000'))).toBe(false);
  });

  it('IT and SM: the CIN letter is checked', () => {
    expect(valid('IT60X0542811101000000123456')).toBe(true);
    expect(valid(withCheck('IT', 'A0542811101000000123456'))).toBe(false);
    expect(valid('SM86U0322509800000000270100')).toBe(true);
    expect(valid(withCheck('SM', 'A0322509800000000270100'))).toBe(false);
  });
});
