// GET /api/v1/iban/{iban} and POST /api/v1/creditcard/validate end to end; card numbers never come back or reach logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const card = (cardNumber: unknown) =>
  h.call('/api/v1/creditcard/validate', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ cardNumber }),
  });

describe('GET /api/v1/iban/{iban}', () => {
  it('answers a valid German IBAN with bank fields and the resolved BIC', async () => {
    const res = await h.call('/api/v1/iban/DE89%203704%200044%200532%200130%2000');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      iban: 'DE89370400440532013000',
      valid: true,
      countryCode: 'DE',
      checkDigit: '89',
      bankCode: '37040044',
      branchCode: null,
      accountNumber: '0532013000',
      bic: 'COBADEFFXXX',
      bicValid: true,
      bankName: 'Commerzbank',
      sepa: true,
      nationalCheck: 'passed',
    });
  });

  it.each([
    ['DE: the Bundesbank name', 'DE89370400440532013000', 'Commerzbank', true],
    ['BE: the national registry name', 'BE71096123456769', 'BELFIUS BANK', true],
    ['BE: a bank code in no table (directory miss)', 'BE68539007547034', null, true],
    ['GB: the registry name', 'GB29NWBK60161331926819', 'NATIONAL WESTMINSTER BANK PUBLIC LIMITED COMPANY', true],
    ['CH: in SEPA outside the EEA', 'CH5604835012345678009', 'UBS Switzerland AG (formerly Credit Suisse)', true],
    ['AT: filled by iban-to-bic, named by the registry', 'AT483200000012345864', 'RAIFFEISENLANDESBANK NIEDERÖSTERREICH-WIEN AG', true],
    ['SM: in SEPA by the EPC list, no bank table', 'SM86U0322509800000000270100', null, true],
    ['GF: a French overseas department, in SEPA', 'GF4120041010050500013M02606', null, true],
    ['TR: not in SEPA', 'TR330006100519786457841326', null, false],
    ['NC: the French IBAN format, outside SEPA; no French BIC or name for it', 'NC8420041010050500013M02606', null, false],
  ])('%s: %s -> bankName %s, sepa %s', async (_label, iban, bankName, sepa) => {
    const res = await h.call(`/api/v1/iban/${iban}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: true, bankName, sepa });
  });

  it('answers a broken checksum with 200 valid false and the extracted fields', async () => {
    const res = await h.call('/api/v1/iban/GB82WEST12345698765433');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, countryCode: 'GB', bankCode: 'WEST', branchCode: '123456', accountNumber: '98765433', bic: null, bicValid: false });
  });

  it.each([
    ['symbols', 'DE89%2437040044'],
    ['65 characters', 'D'.repeat(65)],
    ['only dashes and spaces', '-%20-'],
    ['a tab', 'DE89%093704'],
  ])('answers 400 INVALID_FORMAT for %s', async (_label, iban) => {
    const res = await h.call(`/api/v1/iban/${iban}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_FORMAT', details: [{ field: 'iban', message: 'must be 1-64 letters, digits, spaces or dashes' }] });
  });
});

describe('POST /api/v1/creditcard/validate', () => {
  it('answers a valid Visa number with BIN data and only the last four digits', async () => {
    const res = await card('4571-0800-1234-5677');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: true,
      luhnValid: true,
      cardBrand: 'Visa',
      lastFourDigits: '5677',
      cardType: 'DEBIT',
      issuingBank: 'Flemløse Sparekasse',
      cardCountry: 'DK',
      cardCategory: null,
    });
    expect(res.text).not.toContain('4571080012345677');
  });

  it.each([
    ['Mastercard 2-series', '2221000000000009', 'Mastercard', true],
    ['American Express', '378282246310005', 'AmericanExpress', true],
    ['Luhn failure', '4111111111111112', 'Visa', false],
    ['unknown prefix', '9111111111111111', 'Unknown', false],
  ])('%s', async (_label, number, brand, valid) => {
    const res = await card(number);
    expect(res.body).toMatchObject({ cardBrand: brand, valid });
  });

  it.each([
    ['no digits', 'abcd-efgh'],
    ['empty', ''],
    ['not a string', 4111111111111111],
    ['over 64 characters', '4111 '.repeat(13)],
  ])('answers 400 INVALID_FORMAT for %s without echoing it', async (_label, value) => {
    const res = await card(value);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.text).not.toMatch(/4111|abcd/);
  });

  it('counts 64 characters in code points, as the schema does: emoji around a number are a verdict, not a 400', async () => {
    const res = await card(`${'\u{1F4B3}'.repeat(40)}4111111111111111`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ luhnValid: true, lastFourDigits: '1111' });
  });

  it('never writes the number to the logs', async () => {
    await card('4571 0800 1234 5677');
    h.composition.deps.logger.flush();
    const all = await waitFor(() => h.logs.some((l) => l.includes('validateCard')) && h.logs.join('\n'), { what: 'the access log line' });
    expect(all).toContain('validateCard');
    expect(all).not.toMatch(/4571.?0800.?1234.?5677/);
  });
});
