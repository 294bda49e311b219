// The IBAN verdict (ISO 13616, ISO 7064, national checks) against an independent checker on a generated corpus:
// valid and mutated IBANs of every country either side knows, from a fixed seed (the same corpus on every run).
import { describe, expect, it } from 'vitest';
import { validateIban } from '../../src/domain/iban.js';
import { IBAN_COUNTRIES, ibanFormat } from '../../src/domain/iban-registry.js';
import { ORACLE_COUNTRIES, oracleFormat, oracleValid, repairNational, withCheckDigits } from '../fixtures/iban/oracle.js';

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DIGITS = '0123456789';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ALNUM = DIGITS + LETTERS;
const CLASSES: Record<string, string> = { n: DIGITS, a: LETTERS, c: ALNUM };

/** The notation a country's BBANs are generated from: the oracle's where it has one, else the service's. */
function notationOf(country: string): string {
  return oracleFormat(country)?.spec ?? ibanFormat(country)!.notation;
}

/** Character classes position by position. */
function classesOf(notation: string): string[] {
  return [...notation.matchAll(/(\d+)!?([nac])/g)].flatMap(([, n, t]) => Array<string>(Number(n)).fill(CLASSES[t]));
}

interface Sample {
  iban: string;
  kind: string;
}

function generateCorpus(seed: number, validPerCountry: number, mutatedPerCountry: number): Sample[] {
  const rnd = prng(seed);
  const pick = (s: string) => s[Math.floor(rnd() * s.length)];
  const int = (n: number) => Math.floor(rnd() * n);
  const corpus: Sample[] = [];
  const countries = [...new Set([...IBAN_COUNTRIES, ...ORACLE_COUNTRIES])].sort();
  for (const country of countries) {
    const classes = classesOf(notationOf(country));
    const randomBban = () => classes.map(pick).join('');
    const valid: string[] = [];
    for (let tries = 0; valid.length < validPerCountry && tries < validPerCountry * 20; tries++) {
      const raw = randomBban();
      const bban = repairNational(country, raw);
      if (bban === null) {
        // No check digit exists for these digits (CZ, SK, NO): kept as a mutated sample with a correct MOD 97.
        corpus.push({ iban: withCheckDigits(country, raw), kind: 'no national check digit exists' });
        continue;
      }
      const iban = withCheckDigits(country, bban);
      if (['00', '01', '99'].includes(iban.slice(2, 4))) continue;
      valid.push(iban);
      corpus.push({ iban, kind: 'valid' });
    }
    for (let m = 0; m < mutatedPerCountry; m++) {
      const base = valid[int(valid.length)] ?? withCheckDigits(country, randomBban());
      const bban = base.slice(4);
      const at = int(bban.length);
      switch (m % 6) {
        case 0: {
          // Same character class, MOD 97 recomputed: only a national check can catch it.
          const changed = bban.slice(0, at) + pick(classes[at]) + bban.slice(at + 1);
          corpus.push({ iban: withCheckDigits(country, changed), kind: 'national digit changed' });
          break;
        }
        case 1: {
          const i = int(base.length);
          corpus.push({ iban: base.slice(0, i) + pick(ALNUM) + base.slice(i + 1), kind: 'any character changed' });
          break;
        }
        case 2: {
          const i = int(base.length - 1);
          corpus.push({ iban: base.slice(0, i) + base[i + 1] + base[i] + base.slice(i + 2), kind: 'adjacent swap' });
          break;
        }
        case 3: {
          const changed = rnd() < 0.5 ? bban.slice(0, -1) : bban + pick(classes[classes.length - 1]);
          corpus.push({ iban: withCheckDigits(country, changed), kind: 'length off by one' });
          break;
        }
        case 4: {
          const other = String(2 + int(97)).padStart(2, '0');
          corpus.push({ iban: base.slice(0, 2) + other + bban, kind: 'check digits changed' });
          break;
        }
        default: {
          // A character of the wrong class, MOD 97 recomputed: only the structure can catch it.
          const wrong = classes[at] === DIGITS ? LETTERS : classes[at] === LETTERS ? DIGITS : ALNUM;
          const changed = bban.slice(0, at) + pick(wrong) + bban.slice(at + 1);
          corpus.push({ iban: withCheckDigits(country, changed), kind: 'character class' });
        }
      }
    }
  }
  return corpus;
}

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

const corpus = generateCorpus(20261125, 25, 35);
const verdicts = corpus.map((s) => ({ ...s, ours: validateIban(s.iban, () => null)?.valid === true, theirs: oracleValid(s.iban) }));

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
    const again = generateCorpus(20261125, 25, 35);
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

  it.each(['national digit changed', 'character class', 'no national check digit exists'])(
    'the %s samples include IBANs both reject although MOD 97 passes',
    (kind) => {
      const samples = verdicts.filter((v) => v.kind === kind);
      expect(samples.filter((v) => !v.ours && !v.theirs).length).toBeGreaterThan(0);
    },
  );
});
