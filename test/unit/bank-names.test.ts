// Bank names belong to bank codes (issue #57): every bank code and every BIC of the shipped tables, checked.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bankDataByBLZ } from 'bankdata-germany';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBankDirectory, type BankDirectory } from '../../src/adapters/bank-data/bank-directory.js';
import { BanksOfBic, bankKey } from '../../src/domain/bank-names.js';
import { BANK_METHODS } from '../../src/domain/de-account-check/bank-methods.js';
import { projectPath } from '../../src/http/spec.js';

const DIR = projectPath('data/banks');
const expand = (bic: string) => (bic.length === 8 ? `${bic}XXX` : bic);
/** data/banks/<CC>.json as shipped: country -> bank code -> [BIC or "", name or ""]. */
const TABLES = new Map(
  readdirSync(DIR)
    .filter((f) => /^[A-Z]{2}\.json$/.test(f))
    .map((f) => {
      const { country, banks } = JSON.parse(readFileSync(join(DIR, f), 'utf8')) as { country: string; banks: Record<string, [string, string]> };
      return [country, banks] as const;
    }),
);
/** The German bank codes the service knows, with the Bundesbank's entry now. */
const GERMAN = [...BANK_METHODS.keys()].map((code) => ({ code, entry: bankDataByBLZ(code) }));

/** Every BIC of the shipped tables -> the names of the bank codes that list it. */
function namesByBic(): Map<string, string[]> {
  const byBic = new Map<string, string[]>();
  const add = (bic: string, name: string) => byBic.set(bic, [...(byBic.get(bic) ?? []), ...(name ? [name] : [])]);
  for (const banks of TABLES.values()) for (const [bic, name] of Object.values(banks)) if (bic) add(expand(bic), name);
  for (const { entry } of GERMAN) if (entry?.bic) add(expand(entry.bic), entry.bankName);
  return byBic;
}

let banks: BankDirectory;
beforeAll(async () => {
  banks = await loadBankDirectory(DIR);
});

describe('every bank code answers its own entry\'s name', () => {
  it.each([...TABLES.keys()])('%s: each code of data/banks', (country) => {
    const wrong = Object.entries(TABLES.get(country)!)
      .map(([code, [, name]]) => ({ code, want: name || null, got: banks.bankName(country, code) }))
      .filter(({ want, got }) => want !== got);
    expect(wrong).toEqual([]);
  });

  it('DE: each Bundesbank code', () => {
    const wrong = GERMAN.map(({ code, entry }) => ({ code, want: entry?.bankName || null, got: banks.bankName('DE', code) })).filter(({ want, got }) => want !== got);
    expect(wrong).toEqual([]);
  });

  it.each([
    ['FR', '11425', /EPARGNE.*NORMANDIE/],
    ['FR', '10907', /BANQUE POPULAIRE AQUITAINE/],
    ['FR', '18707', /BANQUE POPULAIRE VAL DE FRANCE/],
    ['FR', '14806', /CREDIT AGRI.*C(EN)?TRE LOIRE/],
    ['ES', '0074', /AMBANCA/],
    ['CZ', '2100', /Hypote/],
    ['PL', '10500422', /ING Bank/],
    ['LT', '30021', /Norwegian/],
    ['SK', '0600', /MONETA/],
  ])('%s %s: the bank of the code, with or without a BIC of the country (%s)', (country, code, name) => {
    expect(banks.bankName(country, code)).toMatch(name);
  });

  it('a code only iban-to-bic knows is not named after its BIC\'s bank (FR 11307 -> CCBPFRPPCAS)', () => {
    expect(TABLES.get('FR')!['11307']).toBeUndefined();
    expect(banks.resolveBic('FR', '11307')).toBe('CCBPFRPPCAS');
    expect(banks.bankName('FR', '11307')).toBeNull();
  });
});

describe('every BIC answers one of its banks\' names, or none when shared', () => {
  const byBic = namesByBic();

  it(`each of the ${byBic.size} BICs`, () => {
    const wrong: unknown[] = [];
    for (const [bic, names] of byBic) {
      const got = banks.bicEntry(bic);
      const many = new Set(names.map(bankKey)).size > 1;
      const ok = got.inDirectory && (got.bankName === null ? many || names.length === 0 : names.includes(got.bankName) && got.sharedBy === 1);
      if (!ok) wrong.push({ bic, got, names: [...new Set(names)].slice(0, 4) });
    }
    expect(wrong).toEqual([]);
  });

  it.each([
    ['CEPAFRPPXXX', 16],
    ['CCBPFRPPXXX', 13],
    ['AGRIFRPPXXX', 2],
  ])('%s is listed for %s banks: no name, sharedBy says how many', (bic, count) => {
    expect(banks.bicEntry(bic)).toEqual({ inDirectory: true, bankName: null, sharedBy: count });
  });

  it.each(['GENODEF1XXX', 'WELADED1XXX', 'RLNWATW1XXX'])('%s, a head office known only by its branches, borrows no branch\'s name', (bic) => {
    expect(byBic.has(bic)).toBe(false);
    expect(banks.bicEntry(bic)).toEqual({ inDirectory: true, bankName: null, sharedBy: 0 });
  });

  it.each([
    ['DEUTDEFFXXX', 'Deutsche Bank'],
    ['COBADEFFXXX', 'Commerzbank'], // 59 codes: its units ("Commerzbank GF-B48", "ZTB der Commerzbank") are one bank
    ['GENODEF1M04', 'Hausbank München'],
    ['SOGEFRPPXXX', 'SOCIETE GENERALE'],
  ])('%s, one bank\'s BIC, names it', (bic, name) => {
    expect(banks.bicEntry(bic)).toEqual({ inDirectory: true, bankName: name, sharedBy: 1 });
  });
});

describe('bankKey and BanksOfBic: which spellings are one bank', () => {
  it.each([
    ['Paynovate', 'Paynovate S.A.', true],
    ['DJURSLANDS BANK', 'DJURSLANDS BANK A/S', true],
    ['Ühisarveldused AS', 'Uhisarveldused AS', true],
    ['Commerzbank', 'Commerzbank, Filiale Berlin 1', true],
    ['Volksbank Stuttgart', 'Volksbank Stuttgart GAA', true],
    ['ReiseBank Gf2', 'ReiseBank Gf3 vormals Cash Express', true],
    ["CAISSE D'EPARGNE CEPAC", "CAISSE D'EPARGNE ET DE PREVOYANCE DE NORMANDIE", false],
    ['BANQUE POPULAIRE GRAND OUEST', 'BANQUE POPULAIRE VAL DE FRANCE', false],
    ['Edekabank', 'EBANK Gf Cash', false],
  ])('%s / %s: one bank %s', (a, b, one) => {
    const banksOf = new BanksOfBic();
    banksOf.add(a);
    banksOf.add(b);
    expect(banksOf.banks === 1).toBe(one);
    if (one) expect([a, b]).toContain(banksOf.name);
    else expect(banksOf.name).toBeNull();
  });
});
