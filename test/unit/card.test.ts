// Card numbers (ISO/IEC 7812): sanitising, Luhn, brand by prefix, BIN data, masking; never the full number out.
import { describe, it, expect, beforeAll } from 'vitest';
import fc from 'fast-check';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { projectPath } from '../../src/http/spec.js';
import {
  maskCardNumbers,
  cardBrand,
  luhnValid,
  sanitiseCardNumber,
  validateCard,
  brandLengthValid,
  leadingNumber,
  type BinLookup,
} from '../../src/domain/card.js';
import { binTableFromCsv, loadBinTable, parseCsv, type LoadedBinTable } from '../../src/adapters/bank-data/bin-table.js';

const RANGES_CSV = fileURLToPath(new URL('../../data/bin/ranges.csv', import.meta.url));
const NO_BIN: BinLookup = { lookup: () => null };

/** Appends the Luhn check digit (written here independently of the module under test). */
function withLuhn(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}

/** A Luhn-valid number of `length` digits starting with `prefix`. */
function cardNumber(prefix: string, length: number): string {
  return withLuhn(prefix.padEnd(length - 1, '0'));
}

describe('public test numbers', () => {
  it.each([
    ['4111111111111111', 'Visa'],
    ['4012888888881881', 'Visa'],
    ['4222222222222', 'Visa'],
    ['5555555555554444', 'Mastercard'],
    ['5105105105105100', 'Mastercard'],
    ['5200828282828210', 'Mastercard'],
    ['2223003122003222', 'Mastercard'],
    ['378282246310005', 'AmericanExpress'],
    ['371449635398431', 'AmericanExpress'],
    ['6011111111111117', 'Discover'],
    ['6011000990139424', 'Discover'],
    ['3056930009020004', 'DinersClub'],
    ['36227206271667', 'DinersClub'],
    ['30569309025904', 'DinersClub'],
    ['38520000023237', 'DinersClub'],
    ['3566002020360505', 'JCB'],
    ['3530111333300000', 'JCB'],
  ])('%s is a valid %s', (number, brand) => {
    expect(validateCard(number, NO_BIN)).toMatchObject({ valid: true, luhnValid: true, cardBrand: brand });
  });
});

describe('brand prefixes (openapi.yaml cardBrand)', () => {
  it.each([
    ['4', 16, 'Visa'],
    ['4', 13, 'Visa'],
    ['4', 19, 'Visa'],
    ['51', 16, 'Mastercard'],
    ['55', 16, 'Mastercard'],
    ['2221', 16, 'Mastercard'],
    ['2720', 16, 'Mastercard'],
    ['34', 15, 'AmericanExpress'],
    ['37', 15, 'AmericanExpress'],
    ['6011', 16, 'Discover'],
    ['6011', 19, 'Discover'],
    ['65', 16, 'Discover'],
    ['300', 14, 'DinersClub'],
    ['301', 14, 'DinersClub'],
    ['302', 16, 'DinersClub'],
    ['303', 14, 'DinersClub'],
    ['304', 19, 'DinersClub'],
    ['305', 14, 'DinersClub'],
    ['36', 14, 'DinersClub'],
    ['38', 16, 'DinersClub'],
    ['3528', 16, 'JCB'],
    ['3589', 16, 'JCB'],
    ['3550', 19, 'JCB'],
  ])('prefix %s, %i digits: valid %s', (prefix, length, brand) => {
    const number = cardNumber(prefix, length);
    expect(validateCard(number, NO_BIN)).toMatchObject({ valid: true, luhnValid: true, cardBrand: brand });
  });

  it.each([
    ['50', 'just below the Mastercard 51-55 range'],
    ['56', 'just above the Mastercard 51-55 range'],
    ['2220', 'just below 2221'],
    ['2721', 'just above 2720'],
    ['35', 'not 3528-3589'],
    ['3527', 'just below the JCB range'],
    ['3590', 'just above the JCB range'],
    ['306', 'just above Diners 300-305'],
    ['6012', 'Discover is 6011 only'],
    ['6445', 'not in the table'],
    ['1', 'no brand'],
    ['9', 'no brand'],
  ])('prefix %s is Unknown (%s)', (prefix) => {
    const number = cardNumber(prefix, 16);
    expect(cardBrand(number)).toBe('Unknown');
    const r = validateCard(number, NO_BIN);
    expect(r).toMatchObject({ luhnValid: true, cardBrand: 'Unknown', valid: false });
  });

  it.each([
    ['4', 'Visa'],
    ['37', 'AmericanExpress'],
    ['65', 'Discover'],
    ['601', 'Unknown'],
    ['3', 'Unknown'],
    ['x4111111111111111', 'Unknown'],
  ])('cardBrand(%j) = %s: a prefix decides once the number is long enough for it', (digits, brand) => {
    expect(cardBrand(digits)).toBe(brand);
  });

  it.each([
    ['4571080012345677', 1, 4],
    ['4571080012345677', 4, 4571],
    ['4571080012345677', 8, 45710800],
    ['457108001234567', 15, 457108001234567],
    ['0042', 4, 42],
    ['457', 4, -1],
    ['45a1', 4, -1],
    ['4 71', 2, -1],
    ['', 1, -1],
  ])('leadingNumber(%j, %i) = %i', (digits, n, want) => {
    expect(leadingNumber(digits, n)).toBe(want);
  });

  it('cardBrand of an empty string is Unknown', () => {
    expect(cardBrand('')).toBe('Unknown');
  });
});

describe('lengths', () => {
  it.each([
    ['4', 14, 'Visa'],
    ['4', 15, 'Visa'],
    ['4', 18, 'Visa'],
    ['51', 15, 'Mastercard'],
    ['51', 19, 'Mastercard'],
    ['34', 16, 'AmericanExpress'],
    ['37', 14, 'AmericanExpress'],
    ['6011', 15, 'Discover'],
    ['36', 13, 'DinersClub'],
    ['3528', 15, 'JCB'],
  ])('prefix %s with %i digits passes Luhn but is not a %s length', (prefix, length, brand) => {
    const r = validateCard(cardNumber(prefix, length), NO_BIN);
    expect(r).toMatchObject({ luhnValid: true, cardBrand: brand, valid: false });
  });

  it('brandLengthValid is false for Unknown', () => {
    expect(brandLengthValid('Unknown', 16)).toBe(false);
  });
});

describe('Luhn', () => {
  it.each(['4111111111111112', '5555555555554445', '378282246310006', '6011111111111118', '3566002020360506'])(
    '%s fails the Luhn check and is invalid',
    (number) => {
      expect(validateCard(number, NO_BIN)).toMatchObject({ luhnValid: false, valid: false });
    },
  );

  it.each([
    ['79927398713', true],
    ['79927398710', false],
    ['0', true],
    ['', false],
    ['12a4', false],
  ])('luhnValid(%j) = %s', (digits, expected) => {
    expect(luhnValid(digits)).toBe(expected);
  });
});

describe('sanitising and plausibility', () => {
  it.each([
    '4111-1111-1111-1111',
    '4111 1111 1111 1111',
    ' 4111.1111/1111x1111 ',
    '4111\t1111\n1111 1111',
  ])('%j is read as 4111111111111111', (input) => {
    expect(sanitiseCardNumber(input)).toBe('4111111111111111');
    expect(validateCard(input, NO_BIN)).toMatchObject({ valid: true, cardBrand: 'Visa', lastFourDigits: '1111' });
  });

  // CardValidationRequest's schema refuses these before the operation runs (test/contract/iban-card.test.ts); the
  // function itself still answers each with a verdict, and with no more than the last four digits.
  it.each([
    ['empty', '', false, ''],
    ['letters only', 'abcd', false, ''],
    ['separators only', '---- ----', false, ''],
    ['65 characters', `4111111111111111${' '.repeat(49)}`, true, '1111'],
    ['65 digits', '4'.repeat(65), false, '4444'],
  ])('gives a verdict for what the contract refuses earlier: %s', (_what, input, valid, lastFourDigits) => {
    expect(validateCard(input, NO_BIN)).toMatchObject({ valid, lastFourDigits });
  });

  it.each([
    ['', ''],
    ['4111', '4111'],
    ['-4111', '4111'],
    ['4111-', '4111'],
    ['a1b2c3', '123'],
    ['٤١١١ 1111', '1111'],
    ['4１11', '411'],
  ])('sanitiseCardNumber(%j) = %j (ASCII digits only)', (input, want) => {
    expect(sanitiseCardNumber(input)).toBe(want);
  });

  it('agrees with removing every non-digit by regular expression, for any input', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789 -./x\t٤'.split('')), maxLength: 64 }), (input) => {
        expect(sanitiseCardNumber(input)).toBe(input.replace(/[^0-9]/g, ''));
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts 64 characters', () => {
    expect(validateCard(`4111111111111111${' '.repeat(48)}`, NO_BIN)?.valid).toBe(true);
  });

  it('accepts a single digit (invalid verdict)', () => {
    expect(validateCard('7', NO_BIN)).toMatchObject({ valid: false, cardBrand: 'Unknown', lastFourDigits: '7' });
  });
});

describe('lastFourDigits and privacy', () => {
  it.each([
    ['4012888888881881', '1881'],
    ['4012 8888 8888 1881', '1881'],
    ['378282246310005', '0005'],
    ['123', '123'],
  ])('%s gives last four %s', (input, last) => {
    expect(validateCard(input, NO_BIN)?.lastFourDigits).toBe(last);
  });

  it.each(['4012888888881881', '5555-5555-5555-4444', '378282246310005', '4111111111111112'])(
    'the result of %s never contains the number or more than its last four digits',
    (input) => {
      const digits = sanitiseCardNumber(input);
      const json = JSON.stringify(validateCard(input, NO_BIN));
      expect(json).not.toContain(digits);
      expect(json).not.toContain(digits.slice(-5));
      expect(json).not.toContain(digits.slice(0, 6));
    },
  );

  it('has exactly the contract fields, cardCategory null', () => {
    const r = validateCard('4012888888881881', NO_BIN);
    expect(Object.keys(r ?? {}).sort()).toEqual(
      ['cardBrand', 'cardCategory', 'cardCountry', 'cardType', 'issuingBank', 'lastFourDigits', 'luhnValid', 'valid'].sort(),
    );
    expect(r?.cardCategory).toBeNull();
  });
});

describe('BIN data: the shipped ranges.csv', () => {
  let table: LoadedBinTable;
  beforeAll(async () => {
    table = await loadBinTable(RANGES_CSV);
  });

  it('loads every row', () => {
    expect(table.size).toBe(5805);
  });

  it.each([
    // 8-digit single prefix beats the 6-digit 457108 (Handelsbanken)
    [cardNumber('45710800', 16), 'DEBIT', 'Flemløse Sparekasse', 'DK'],
    // 8-digit range 45710825..45710827
    [cardNumber('45710826', 16), 'DEBIT', 'Nordea', 'DK'],
    // no 8-digit entry for 45710899: falls back to the 6-digit prefix
    [cardNumber('45710899', 16), 'DEBIT', 'Handelsbanken', 'DK'],
    // 6-digit range 371241..371242
    [cardNumber('371242', 15), 'CREDIT', 'AMERICAN EXPRESS', 'US'],
    // prepaid=y wins over type debit
    [cardNumber('453748', 16), 'PREPAID', 'SCOTIABANK', 'CA'],
    [cardNumber('531306', 16), 'PREPAID', 'Wirecard Card Solutions', 'GB'],
    // a quoted bank name with commas
    [cardNumber('400390', 16), 'CREDIT', 'BANK OF AMERICA, N.A. (USA)', 'US'],
  ])('%s hits: %s, %s, %s', (number, cardType, issuingBank, cardCountry) => {
    expect(validateCard(number, table)).toMatchObject({ valid: true, cardType, issuingBank, cardCountry });
  });

  it.each(['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '3566002020360505'])(
    '%s is not in the data: BIN fields null',
    (number) => {
      expect(validateCard(number, table)).toMatchObject({ cardType: null, issuingBank: null, cardCountry: null });
    },
  );

  it('finds nothing for a number shorter than any prefix', () => {
    expect(table.lookup('45371')).toBeNull();
  });
});

describe('BIN data: a small CSV', () => {
  const csv = [
    'iin_start,iin_end,number_length,number_luhn,scheme,brand,type,prepaid,country,bank_name,bank_logo,bank_url,bank_phone,bank_city',
    '411111,,16,,visa,,credit,,us,"Six Digit Bank, ""Main""",,,,',
    '41111122,,16,,visa,,debit,,GB,Eight Digit Bank,,,,',
    '41111130,41111139,16,,visa,,,true,DE,Prepaid Range Bank,,,,',
    '520000,520099,16,,mastercard,,debit,,,,,,,',
    '999,,,,,,credit,,FR,Three Digit Bank,,,,',
    'not-a-number,,,,,,credit,,FR,Broken Row,,,,',
    '600000,599999,,,,,credit,,FR,Backwards Range,,,,',
  ].join('\r\n');
  const table = binTableFromCsv(csv);

  it.each([
    ['4111112299999999', { cardType: 'DEBIT', issuingBank: 'Eight Digit Bank', cardCountry: 'GB' }],
    ['4111112399999999', { cardType: 'CREDIT', issuingBank: 'Six Digit Bank, "Main"', cardCountry: 'US' }],
    ['4111113500000000', { cardType: 'PREPAID', issuingBank: 'Prepaid Range Bank', cardCountry: 'DE' }],
    ['5200500000000000', { cardType: 'DEBIT', issuingBank: null, cardCountry: null }],
    ['9990000000000000', { cardType: 'CREDIT', issuingBank: 'Three Digit Bank', cardCountry: 'FR' }],
  ])('%s → %o', (digits, entry) => {
    expect(table.lookup(digits)).toEqual(entry);
  });

  it.each(['5201000000000000', '4111120000000000', '5999990000000000'])('%s is a miss', (digits) => {
    expect(table.lookup(digits)).toBeNull();
  });

  it('skips rows without a usable prefix', () => {
    expect(table.size).toBe(5);
  });

  it('picks the narrowest of overlapping ranges of one length', () => {
    const t = binTableFromCsv(
      'iin_start,iin_end,type,bank_name\n400000,499999,credit,Wide\n450000,450010,debit,Narrow\n',
    );
    expect(t.lookup('4500050000000000')?.issuingBank).toBe('Narrow');
    expect(t.lookup('4500110000000000')?.issuingBank).toBe('Wide');
  });

  it('maps columns by header name, not position', () => {
    const t = binTableFromCsv('bank_name,country,iin_start,type\nReordered,se,424242,debit\n');
    expect(t.lookup('4242424242424242')).toEqual({ cardType: 'DEBIT', issuingBank: 'Reordered', cardCountry: 'SE' });
  });
});

describe('parseCsv', () => {
  it('handles quotes, doubled quotes, embedded newlines, CRLF, a BOM and blank lines', () => {
    expect(parseCsv('\ufeffa,b\r\n"x, y","say ""hi"""\n\n"multi\nline",\n')).toEqual([
      ['a', 'b'],
      ['x, y', 'say "hi"'],
      ['multi\nline', ''],
    ]);
  });

  it('keeps a last row without a trailing newline', () => {
    expect(parseCsv('a,b\n1,2')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('reads any text as the character loop alone does (lines split at once where they hold no quote or lone CR)', () => {
    // The parser before the split fast path, kept here as the reference.
    const reference = (text: string): string[][] => {
      const rows: string[][] = [];
      let row: string[] = [];
      let field = '';
      let quoted = false;
      let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
      const endRow = (): void => {
        row.push(field);
        field = '';
        if (row.length > 1 || row[0] !== '') rows.push(row);
        row = [];
      };
      for (; i < text.length; i++) {
        const ch = text[i];
        if (quoted) {
          if (ch === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i++;
            } else quoted = false;
          } else field += ch;
        } else if (ch === '"') quoted = true;
        else if (ch === ',') {
          row.push(field);
          field = '';
        } else if (ch === '\n') endRow();
        else if (ch === '\r') {
          if (text[i + 1] === '\n') i++;
          endRow();
        } else field += ch;
      }
      if (field !== '' || row.length > 0) endRow();
      return rows;
    };
    const csvText = fc.array(fc.constantFrom('a', 'b1', ',', '"', '""', '\n', '\r', '\r\n', ' ', '\ufeff'), { maxLength: 40 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(csvText, (text) => {
        expect(parseCsv(text)).toEqual(reference(text));
      }),
      { numRuns: 5000, seed: 7812 },
    );
    const shipped = readFileSync(projectPath('data/bin/ranges.csv'), 'utf8');
    expect(parseCsv(shipped)).toEqual(reference(shipped));
  });
});

describe('maskCardNumbers', () => {
  it.each([
    ['/api/v1/creditcard/4111111111111111', '/api/v1/creditcard/************1111'],
    ['/x/378282246310005/y/5555555555554444', '/x/***********0005/y/************4444'],
    ['/x/4111111111111112', '/x/4111111111111112'],
    ['/x/41111111111111110', '/x/41111111111111110'],
    ['/x/12345678901', '/x/12345678901'],
    ['/api/v1/iban/DE89370400440532013000', '/api/v1/iban/DE89370400440532013000'],
    ["'4111 1111 1111 1111' is not a valid host name", "'************1111' is not a valid host name"],
    ['4111-1111-1111-1111', '************1111'],
    ['1234 4111111111111111', '1234 ************1111'],
    ['4111  1111 1111 1111', '************1111'],
    // Whatever separates the groups (issue: '.', '_', '/', '+', tab), and their percent-encodings.
    ['4539.5787.6362.1486', '************1486'],
    ['4539_5787_6362_1486', '************1486'],
    ['/api/v1/iban/4539/5787/6362/1486', '/api/v1/iban/************1486'],
    ['4539+5787+6362+1486', '************1486'],
    ['4539\t5787\t6362\t1486', '************1486'],
    ['4539. 5787 .6362--1486', '************1486'],
    ['/api/v1/dns/4539%2E5787%2E6362%2E1486', '/api/v1/dns/************1486'],
    ['/api/v1/dns/4539%2e5787%5F6362%2B1486', '/api/v1/dns/************1486'],
    ['4539.5787.6362.1487', '4539.5787.6362.1487'],
    ['4539 x 5787 6362 1486', '4539 x 5787 6362 1486'],
    ['192.168.100.200', '192.168.100.200'],
    ['2026-11-23 01:50', '2026-11-23 01:50'],
    ['/api/v1/nothing/4111111111111111-1', '/api/v1/nothing/************1111-1'],
    ['4111 1111 1111 1111 12', '************1111 12'],
    ['12 4111 1111 1111 1111', '12 ************1111'],
    ['12 4111111111111111', '12 ************1111'],
    ['/api/v1/dns/4111%201111%201111%201111', '/api/v1/dns/************1111'],
    ['4111 1111 1111 1111 5555 5555 5555 4444', '************1111 ************4444'],
    [`x ${'1 '.repeat(81)}x`, `x ${'* '.repeat(81)}x`],
    ['', ''],
  ])('%s -> %s', (given, want) => {
    expect(maskCardNumbers(given)).toBe(want);
  });
});

describe('maskEchoedEmail', () => {
  it('masks a card number however grouped in every echoed field of an email result', async () => {
    const { maskEchoedEmail } = await import('../../src/domain/email.js');
    const r = maskEchoedEmail({ email: '4539.5787.6362.1486@gmial.com', user: '4539.5787.6362.1486', domain: 'gmial.com', didYouMean: '4539.5787.6362.1486@gmail.com', validFormat: true });
    expect(r).toEqual({ email: '************1486@gmial.com', user: '************1486', domain: 'gmial.com', didYouMean: '************1486@gmail.com', validFormat: true });
  });
});
