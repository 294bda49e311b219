// The SEPA schemes' geographical scope (EPC409-09) by IBAN country code: table-driven.
import { describe, expect, it } from 'vitest';
import { inSepaScope, SEPA_SCOPE_SIZE } from '../../src/domain/sepa.js';

describe('inSepaScope', () => {
  it.each(['DE', 'FR', 'MT', 'IS', 'LI', 'NO', 'CH', 'GB', 'MC', 'SM', 'VA', 'AD', 'AL', 'ME', 'MD', 'MK', 'RS', 'AX', 'GF', 'GP', 'MQ', 'YT', 'RE', 'BL', 'MF', 'PM', 'GI', 'GG', 'JE', 'IM'])(
    '%s is in scope',
    (code) => expect(inSepaScope(code)).toBe(true),
  );

  it.each(['TR', 'UA', 'BA', 'XK', 'BR', 'US', 'NC', 'PF', 'WF', 'TF', 'FO', 'GL', '', 'de'])('%s is not', (code) => {
    expect(inSepaScope(code)).toBe(false);
  });

  it('holds the 41 countries and the 13 territories of the list', () => {
    expect(SEPA_SCOPE_SIZE).toBe(41 + 13);
  });
});
