// GET /api/v1/bic/{bic} end to end: verdicts as 200, implausible input as 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('GET /api/v1/bic/{bic}', () => {
  it('answers the full result for DEUTDEFF', async () => {
    const res = await h.call('/api/v1/bic/DEUTDEFF');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX', inDirectory: true, bankName: 'Deutsche Bank', sharedBy: 1 });
  });

  it.each([
    ['a German head office', 'DEUTDEFF', true, 'Deutsche Bank'],
    ['a listed branch BIC (Bundesbank)', 'GENODEF1M04', true, 'Hausbank München'],
    ['a Belgian bank (national registry)', 'GEBABEBB', true, 'BNP Paribas Fortis'],
    ['a French bank known to iban-to-bic and the registry', 'BNPAFRPP', true, 'BNP PARIBAS'],
    ['well-formed, in no directory', 'ZZZZDEFFXXX', false, null],
    ['an unlisted branch of a listed bank', 'DEUTDEFF123', false, null],
    ['outside the 43 countries (no directory)', 'CHASUS33', false, null],
    ['invalid (country ZZ)', 'DEUTZZFF', false, null],
  ])('%s: %s -> inDirectory %s, bankName %s', async (_label, bic, inDirectory, bankName) => {
    const res = await h.call(`/api/v1/bic/${bic}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ inDirectory, bankName });
    // A directory miss is not a structural failure: the answer stays valid for a well-formed BIC.
    if (bic === 'ZZZZDEFFXXX') expect(res.body.valid).toBe(true);
  });

  it.each([
    ['valid 11', 'DEUTDEFF500', true],
    ['lower case', 'deutdeff', true],
    ['printed with a space', 'DEUT%20DEFF', true],
    ['wrong country', 'DEUTZZFF', false],
    ['digits in the institution', '1EUTDEFF', false],
    ['7 characters', 'DEUTDEF', false],
    ['12 characters', 'DEUTDEFF5001', false],
  ])('%s -> 200 valid=%s', async (_label, bic, valid) => {
    const res = await h.call(`/api/v1/bic/${bic}`);
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(valid);
  });

  it.each([
    ['65 characters', 'A'.repeat(65)],
    ['symbols', 'DEUT%24EFF'],
    ['a dot', 'DEUT.DEFF'],
  ])('%s -> 400 INVALID_FORMAT', async (_label, bic) => {
    const res = await h.call(`/api/v1/bic/${bic}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_FORMAT');
    expect(res.body.details[0].field).toBe('bic');
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await h.fetch('/api/v1/bic/DEUTDEFF', { method: 'HEAD', headers: { 'X-Api-Key': h.key } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });
});
