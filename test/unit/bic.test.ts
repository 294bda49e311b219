// BIC structure (ISO 9362): table-driven given/want cases.
import { describe, expect, it } from 'vitest';
import { validateBic } from '../../src/domain/bic.js';

describe('validateBic', () => {
  it.each([
    ['8 characters, expanded with XXX', 'DEUTDEFF', { bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' }],
    ['11 characters', 'DEUTDEFF500', { bic: 'DEUTDEFF500', valid: true, branchCode: '500' }],
    ['lower case', 'deutdeff', { bic: 'DEUTDEFFXXX', valid: true }],
    ['spaces and dashes', ' DEUT-DE FF-500 ', { bic: 'DEUTDEFF500', valid: true }],
    ['digits in the location', 'MARKDEF1', { valid: true, countryCode: 'DE', locationCode: 'F1' }],
    ['a South African BIC', 'NEDSZAJJ', { valid: true, countryCode: 'ZA' }],
    ['Kosovo, used by SWIFT', 'RBKOXKPR', { valid: true, countryCode: 'XK' }],
    ['a country that does not exist', 'DEUTZZFF', { valid: false, countryCode: 'ZZ' }],
    ['digits in the institution', 'DE1TDEFF', { valid: false, bankCode: 'DE1T' }],
    ['7 characters', 'DEUTDEF', { bic: 'DEUTDEF', valid: false, locationCode: 'F', branchCode: '' }],
    ['9 characters', 'DEUTDEFF5', { valid: false }],
    ['12 characters', 'DEUTDEFF5001', { bic: 'DEUTDEFF5001', valid: false }],
    ['a lower-case country that does not exist', 'deutqqff', { valid: false, countryCode: 'QQ' }],
  ])('%s: %s', (_label, given, want) => {
    expect(validateBic(given)).toMatchObject(want);
  });

  // The Bic parameter's schema refuses these before the operation runs (test/contract/bic.test.ts); the function
  // itself still answers each with a verdict.
  it.each([
    ['65 characters', 'A'.repeat(65), false],
    ['symbols', 'DEUT$EFF', false],
    ['only spaces', '   ', false],
    ['empty', '', false],
    ['unicode letters', 'DÉUTDEFF', false],
    ['a newline inside', 'DEUT\nDEFF', true],
  ])('gives a verdict for what the contract refuses earlier: %s', (_label, given, valid) => {
    expect(validateBic(given).valid).toBe(valid);
  });

  it.each([
    ['a card number', '4111 1111 1111 1111', { bic: '************1111', valid: false, bankCode: '****', countryCode: '**', locationCode: '**', branchCode: '***' , inDirectory: false, bankName: null, sharedBy: 0 }],
    ['a dashed card number', '5555-5555-5555-4444', { bic: '************4444', valid: false, bankCode: '****', countryCode: '**', locationCode: '**', branchCode: '***' , inDirectory: false, bankName: null, sharedBy: 0 }],
    ['a card number after letters', 'DEUT378282246310005', { bic: 'DEUT***********0005', valid: false, bankCode: 'DEUT', countryCode: '**', locationCode: '**', branchCode: '***' , inDirectory: false, bankName: null, sharedBy: 0 }],
    ['16 digits failing Luhn (no card number)', '4111111111111112', { bic: '4111111111111112', valid: false, bankCode: '4111', countryCode: '11', locationCode: '11', branchCode: '111' , inDirectory: false, bankName: null, sharedBy: 0 }],
  ])('masks a card number to its last four in every field: %s', (_label, given, want) => {
    expect(validateBic(given)).toEqual(want);
  });

  it('accepts exactly 64 characters as an attempt (and judges it invalid)', () => {
    expect(validateBic('A'.repeat(64))).toMatchObject({ valid: false });
  });
});
