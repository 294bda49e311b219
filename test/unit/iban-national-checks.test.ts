// The national checks added by issue #43: FI and AX (Luhn over the account's machine form), IS (the kennitala's
// check digit), MR and TN (the RIB key, ISO 7064 MOD 97-10 variant), TL (ISO 7064 MOD 97-10 over the BBAN).
import { describe, expect, it } from 'vitest';
import { ibanStructureAndChecksumValid as valid } from '../../src/domain/iban-check.js';
import { mod97, nationalCheck } from '../../src/domain/iban-national.js';
import { validateIban } from '../../src/domain/iban.js';

/** MOD 97-10 check digits for country + BBAN (BigInt, apart from the service's fold). */
function withCheck(country: string, bban: string): string {
  const n = BigInt(`${bban}${country}00`.replace(/[A-Z]/g, (ch) => String(ch.charCodeAt(0) - 55)));
  return `${country}${String(98n - (n % 97n)).padStart(2, '0')}${bban}`;
}

describe('the SWIFT IBAN Registry\'s examples pass their national check', () => {
  it.each([
    'FI2112345600000785',
    'FI5542345670000081', // account 423456-781: a bank group 4 number, padded after its 7th digit
    'IS140159260076545510730339',
    'MR1300020001010000123456753',
    'TN5910006035183598478831',
    'TL380080012345678910157',
  ])('%s', (iban) => {
    expect(validateIban(iban, () => null)).toMatchObject({ valid: true, nationalCheck: 'passed' });
  });

  it('AX uses Finnish accounts: the FI example under AX passes, its check digit changed fails', () => {
    expect(valid(withCheck('AX', '12345600000785'))).toBe(true);
    expect(valid(withCheck('AX', '12345600000786'))).toBe(false);
  });
});

// [country, BBAN whose national check passes, the same with one digit changed; MOD 97 recomputed for each]
describe('a changed digit fails the national check although MOD 97 passes', () => {
  it.each([
    // FI: 123456-785 in machine form; the check digit, then an account digit, changed.
    ['FI', '12345600000785', '12345600000786'],
    ['FI', '12345600000785', '12345600000875'],
    ['FI', '42345670000081', '42345670000018'],
    // IS: the kennitala 551073-0339 of the registry example; its check digit, then its day, changed.
    ['IS', '0159260076545510730339', '0159260076545510730349'],
    ['IS', '0159260076545510730339', '0159260076545610730339'],
    // MR, TN: the RIB key (last two digits), then an account digit, changed.
    ['MR', '00020001010000123456753', '00020001010000123456754'],
    ['MR', '00020001010000123456753', '00020001010000123465753'],
    ['TN', '10006035183598478831', '10006035183598478832'],
    ['TN', '10006035183598478831', '10006035183589478831'],
    // TL: the MOD 97-10 key, then an account digit, changed.
    ['TL', '0080012345678910157', '0080012345678910158'],
    ['TL', '0080012345678910157', '0080012345678901157'],
  ])('%s: %s passes, %s fails', (country, good, bad) => {
    expect(nationalCheck(country, good)).toBe('passed');
    expect(nationalCheck(country, bad)).toBe('failed');
    expect(valid(withCheck(country, good))).toBe(true);
    expect(validateIban(withCheck(country, bad), () => null)).toMatchObject({ valid: false, nationalCheck: 'failed' });
  });
});

describe('IS: the kennitala inside the BBAN', () => {
  // Kennitala numbers of people and companies published online (python-stdnum's test list of numbers found online).
  it.each([
    '0208842749', '2607565169', '4406032540', '4504013150', '4804080550', '4905891209', '5609091440',
    '5801691559', '5806070710', '6410051340', '6709012110', '6709060190', '7003090610',
  ])('%s checks in an Icelandic BBAN; its check digit changed does not', (kennitala) => {
    const bban = `015926007654${kennitala}`;
    expect(nationalCheck('IS', bban)).toBe('passed');
    const wrong = `${kennitala.slice(0, 8)}${(Number(kennitala[8]) + 1) % 10}${kennitala[9]}`;
    expect(nationalCheck('IS', `015926007654${wrong}`)).toBe('failed');
  });

  it('a kennitala whose first 8 digits leave remainder 1 mod 11 has no check digit: every digit fails', () => {
    // 00000300: 3 × 4 = 12 ≡ 1 mod 11, so the check digit would be 10.
    for (let d = 0; d <= 9; d++) expect(nationalCheck('IS', `01592600765400000300${d}0`)).toBe('failed');
  });
});

describe('MR and TN: the RIB key runs 01..97', () => {
  it('a key of 00 is never issued although the BBAN is then ≡ 0 mod 97 as well', () => {
    // Body 0 with key 97 passes; the all-zero BBAN (key 00) does not.
    expect(nationalCheck('TN', '000000000000000000' + '97')).toBe('passed');
    expect(nationalCheck('TN', '00000000000000000000')).toBe('failed');
    expect(nationalCheck('MR', '000000000000000000000' + '97')).toBe('passed');
    expect(nationalCheck('MR', '00000000000000000000000')).toBe('failed');
  });
});

describe('mod97', () => {
  /** The remainder by BigInt, letters as 10..35, after `before` (ISO 7064's conversion). */
  const reference = (s: string, before = '') => Number(BigInt(`${before}${s}`.replace(/[A-Z]/g, (ch) => String(ch.charCodeAt(0) - 55)) || '0') % 97n);
  const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const strings = Array.from({ length: 400 }, (_, i) => Array.from({ length: 1 + (i % 60) }, () => ALPHABET[next() % (i % 3 === 0 ? 10 : 36)]).join(''));

  it('gives the exact remainder of any digits and letters up to 60 characters (reduced in steps, never inexact)', () => {
    for (const s of [...strings, '9'.repeat(60), 'Z'.repeat(40), '0']) expect(mod97(s)).toBe(reference(s));
  });

  it('carries a remainder into the characters after it', () => {
    for (const s of strings.slice(0, 50)) expect(mod97('DE89', mod97(s))).toBe(reference('DE89', s));
  });
});
