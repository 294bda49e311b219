// IBAN and card operation handlers: validated input to domain to reply, without HTTP. The handlers trust the request
// validator: what it refuses (400 INVALID_FORMAT) is tested through the app, test/contract/iban-card.test.ts.
import { afterEach, describe, it, expect, vi } from 'vitest';
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

describe('validateIban handler: the bank code\'s answers kept for a minute', () => {
  afterEach(() => vi.useRealTimers());
  /** A directory that counts its questions and names its BICs by `tag`. */
  const counting = (tag: string) => {
    const asked = { bic: 0, name: 0 };
    const banks = {
      resolveBic: () => (asked.bic++, `COBADEFF${tag}`),
      bankName: () => (asked.name++, `Bank ${tag}`),
      bicEntry: () => ({ inDirectory: false, bankName: null, sharedBy: 0 }),
    };
    return { asked, banks };
  };
  const iban = (op: any) => op.validateIban(request({ params: { iban: 'DE89370400440532013000' } })).body;

  it('asks the directory once per bank code within a minute, and again after it', () => {
    vi.useFakeTimers({ now: 0 });
    const { asked, banks } = counting('XXX');
    const op: any = createBankingOperations({ banks: () => banks });
    expect(iban(op)).toMatchObject({ bic: 'COBADEFFXXX', bicValid: true, bankName: 'Bank XXX' });
    iban(op);
    expect(asked).toEqual({ bic: 1, name: 1 });
    vi.setSystemTime(60_000);
    iban(op);
    expect(asked).toEqual({ bic: 2, name: 2 });
  });

  it('answers from a reloaded directory at once', () => {
    let current = counting('XXX').banks;
    const op: any = createBankingOperations({ banks: () => current });
    expect(iban(op).bic).toBe('COBADEFFXXX');
    current = counting('100').banks;
    expect(iban(op)).toMatchObject({ bic: 'COBADEFF100', bankName: 'Bank 100' });
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
