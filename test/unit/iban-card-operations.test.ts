// IBAN and card operation handlers: validated input to domain to reply, without HTTP. The handlers trust the request
// validator: what it refuses (400 INVALID_FORMAT) is tested through the app, test/contract/iban-card.test.ts.
import { describe, it, expect } from 'vitest';
import { createBankingOperations } from '../../src/operations/banking.js';
import { createCardOperations } from '../../src/operations/security.js';
import { binTableFromCsv } from '../../src/adapters/bank-data/bin-table.js';
import { PACKAGED_BANKS } from '../../src/adapters/bank-data/bank-directory.js';

const bin = binTableFromCsv(
  'iin_start,iin_end,type,prepaid,country,bank_name\n401288,,credit,,US,Test Issuer\n',
);
const ops: any = {
  ...createBankingOperations({ banks: () => PACKAGED_BANKS }),
  ...createCardOperations({ bin: () => bin }),
};

/** openapi-backend's context as a handler gets it. */
function request(parts: { params?: Record<string, unknown>; body?: unknown }): any {
  return { request: { params: parts.params ?? {}, query: {}, requestBody: parts.body, headers: {}, ip: '127.0.0.1' } };
}

describe('validateIban handler', () => {
  it('answers 200 with the result for a valid IBAN', () => {
    const reply = ops.validateIban(request({ params: { iban: 'DE89 3704 0044 0532 0130 00' } }));
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ iban: 'DE89370400440532013000', valid: true, bic: 'COBADEFFXXX' });
  });

  it('answers 200 with valid false for a plausible failing IBAN', () => {
    const reply = ops.validateIban(request({ params: { iban: 'DE88370400440532013000' } }));
    expect(reply).toMatchObject({ status: 200, body: { valid: false, bankCode: '37040044' } });
  });
});

describe('validateCard handler', () => {
  it('answers 200 with the verdict and BIN data', () => {
    const reply = ops.validateCard(request({ body: { cardNumber: '4012 8888 8888 1881' } }));
    expect(reply).toEqual({
      status: 200,
      body: {
        valid: true,
        luhnValid: true,
        cardBrand: 'Visa',
        lastFourDigits: '1881',
        cardType: 'CREDIT',
        issuingBank: 'Test Issuer',
        cardCountry: 'US',
        cardCategory: null,
      },
    });
  });

  it('answers 200 with valid false for a Luhn failure', () => {
    const reply = ops.validateCard(request({ body: { cardNumber: '4012888888881882' } }));
    expect(reply.body).toMatchObject({ valid: false, luhnValid: false });
  });

  const secret = '4012888888881881';
  it('never returns the full number in a 200 body', () => {
    const reply = ops.validateCard(request({ body: { cardNumber: `${secret.slice(0, 8)}-${secret.slice(8)}` } }));
    const sent = JSON.stringify(reply);
    expect(sent).not.toContain(secret);
    expect(sent).not.toContain(secret.slice(0, 8));
  });
});
