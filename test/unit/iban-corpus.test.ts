// The IBAN verdict (ISO 13616, ISO 7064, national checks) against an independent checker on a generated corpus:
// valid and mutated IBANs of every country either side knows, from a fixed seed (the same corpus on every run).
// The checker has no German account methods: German IBANs are compared with methods off here, and with them
// against schwifty's own verdicts in iban-schwifty.test.ts.
import { describe, expect, it } from 'vitest';
import { validateIban } from '../../src/domain/iban.js';
import { IBAN_COUNTRIES } from '../../src/domain/iban-registry.js';
import { oracleFormat, oracleValid } from '../fixtures/iban/oracle.js';
import { corpus as generate, CORPUS_PARAMETERS, generateCorpus } from '../fixtures/iban/corpus.js';

/**
 * Where the two implementations follow different rules on purpose (docs/iban-rules.md, "Documented differences").
 * Returns the reason, or null when they must agree.
 */
function documentedDifference(iban: string): string | null {
  const country = iban.slice(0, 2);
  if (['GG', 'IM', 'JE'].includes(country)) return 'GG, IM, JE issue GB IBANs: no IBAN country code of their own';
  const bceao = ['BF', 'BJ', 'CI', 'GW', 'ML', 'NE', 'SN', 'TG'];
  if (bceao.includes(country) && /^[A-Z0-9]{2}/.test(iban.slice(4))) {
    const ours = /^[A-Z][A-Z0-9]/.test(iban.slice(4, 6));
    const theirs = new RegExp(`^${oracleFormat(country)!.spec.startsWith('2!a') ? '[A-Z]{2}' : '[A-Z0-9]{2}'}`).test(iban.slice(4, 6));
    if (ours !== theirs) return 'BCEAO bank code: one letter then a letter or digit (old and current codes)';
  }
  return null;
}

const corpus = generate();
const noGermanMethods = () => null;
const verdicts = corpus.map((s) => ({
  ...s,
  ours: validateIban(s.iban, () => null, noGermanMethods)?.valid === true,
  theirs: oracleValid(s.iban),
}));

describe('IBAN corpus against an independent checker', () => {
  it('holds at least 5,000 IBANs of every country, valid and invalid alike', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(5000);
    const countries = new Set(corpus.map((s) => s.iban.slice(0, 2)));
    for (const c of IBAN_COUNTRIES) expect(countries.has(c), c).toBe(true);
    const valid = verdicts.filter((v) => v.ours).length;
    expect(valid).toBeGreaterThan(corpus.length * 0.4);
    expect(valid).toBeLessThan(corpus.length * 0.7);
  });

  it('is the same corpus on every run (fixed seed)', () => {
    const p = CORPUS_PARAMETERS;
    const again = generateCorpus(p.seed, p.validPerCountry, p.mutatedPerCountry, p.germanBanks);
    expect(again.map((s) => s.iban)).toEqual(corpus.map((s) => s.iban));
  });

  it('agrees with the independent checker on at least 99.5% outside documented differences', () => {
    const compared = verdicts.filter((v) => documentedDifference(v.iban) === null);
    const disagreements = compared.filter((v) => v.ours !== v.theirs);
    const documented = verdicts.length - compared.length;
    const rate = 1 - disagreements.length / compared.length;
    console.info(
      `iban corpus: ${verdicts.length} IBANs, ${documented} under documented differences, ${compared.length} compared, ` +
        `${disagreements.length} disagreements, agreement ${(rate * 100).toFixed(2)}%`,
    );
    expect(disagreements.slice(0, 10)).toEqual([]);
    expect(rate).toBeGreaterThanOrEqual(0.995);
  });

  it('the documented differences are real: the two disagree on some of them', () => {
    const documented = verdicts.filter((v) => documentedDifference(v.iban) !== null);
    expect(documented.filter((v) => v.ours !== v.theirs).length).toBeGreaterThan(0);
  });

  it.each(['FI', 'AX', 'IS', 'MR', 'TN', 'TL'])('%s: the new national checks reject some IBANs whose MOD 97 passes', (country) => {
    const samples = verdicts.filter((v) => v.iban.startsWith(country) && v.kind === 'national digit changed');
    expect(samples.filter((v) => !v.ours && !v.theirs).length).toBeGreaterThan(0);
    expect(samples.filter((v) => v.ours !== v.theirs)).toEqual([]);
  });

  it.each(['national digit changed', 'character class', 'no national check digit exists'])(
    'the %s samples include IBANs both reject although MOD 97 passes',
    (kind) => {
      const samples = verdicts.filter((v) => v.kind === kind);
      expect(samples.filter((v) => !v.ours && !v.theirs).length).toBeGreaterThan(0);
    },
  );
});
