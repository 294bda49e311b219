// DKIM key records (RFC 6376 §3.6.1): what counts as a published, usable key.
import { describe, expect, it } from 'vitest';
import { dkimName, isDkimRecord } from '../../src/domain/dkim.js';

describe('isDkimRecord', () => {
  it.each([
    ['v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC', true],
    ['k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC', true],
    ['v=DKIM1; p= MIGf MA0G ', true],
    ['v=DKIM1; k=rsa; p=', false],
    ['v=DKIM1; p= ;', false],
    ['v=DKIM1; k=rsa', false],
    ['k=rsa; v=DKIM1; p=MIGf', false],
    ['v=DKIM2; p=MIGf', false],
    ['v=spf1 include:_spf.example.com -all', false],
    ['', false],
  ])('%j -> %s', (txt, want) => {
    expect(isDkimRecord(txt)).toBe(want);
  });
});

describe('dkimName', () => {
  it('puts the selector under _domainkey', () => {
    expect(dkimName('selector1', 'example.com')).toBe('selector1._domainkey.example.com');
  });
});
