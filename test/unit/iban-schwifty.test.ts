// The IBAN verdict, German account methods included, against schwifty's own verdicts on the generated corpus
// (test/fixtures/iban/corpus.ts): schwifty itself was run by scripts/compare-schwifty.ts, which recorded its
// answers in schwifty-verdicts.json. Regenerate them there when the corpus changes (this test says when).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateIban } from '../../src/domain/iban.js';
import { corpus as generate } from '../fixtures/iban/corpus.js';
import { schwiftyDifference } from '../fixtures/iban/schwifty-differences.js';
import recorded from '../fixtures/iban/schwifty-verdicts.json' with { type: 'json' };

const corpus = generate();
const rows = corpus.map((s, i) => {
  const result = validateIban(s.iban, () => null);
  return { ...s, result, theirs: recorded.verdicts[i] === '1' };
});

describe('IBAN corpus against schwifty (recorded verdicts)', () => {
  it('the recorded verdicts belong to this corpus (else rerun scripts/compare-schwifty.ts --write)', () => {
    expect(recorded.count).toBe(corpus.length);
    expect(recorded.verdicts).toHaveLength(corpus.length);
    // The German samples' accounts are made right by the service's own methods: a new method changes the corpus.
    const sha = createHash('sha256').update(corpus.map((s) => s.iban).join('\n')).digest('hex');
    expect(sha).toBe(recorded.corpusSha256);
  });

  it('holds about 5,000 IBANs or more, over every country and 1,200 German ones', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(5000);
    expect(rows.filter((r) => r.kind.startsWith('DE account')).length).toBe(1200);
  });

  it('agrees with schwifty on at least 99.9% outside the documented differences', () => {
    const compared = rows.filter((r) => schwiftyDifference(r.iban, r.result) === null);
    const disagreements = compared.filter((r) => r.result.valid !== r.theirs);
    const german = compared.filter((r) => r.iban.startsWith('DE'));
    const rate = 1 - disagreements.length / compared.length;
    console.info(
      `iban vs schwifty: ${rows.length} IBANs, ${rows.length - compared.length} under documented differences, ` +
        `${compared.length} compared (${german.length} German), ${disagreements.length} disagreements, ` +
        `agreement ${(rate * 100).toFixed(2)}%`,
    );
    expect(disagreements.slice(0, 10).map((r) => `${r.iban} ours ${r.result.valid}`)).toEqual([]);
    expect(rate).toBeGreaterThanOrEqual(0.999);
  });

  it('German accounts: both reject some whose MOD 97 passes, by the bank\'s method', () => {
    const failed = rows.filter(
      (r) => r.iban.startsWith('DE') && r.result.nationalCheck === 'failed' && schwiftyDifference(r.iban, r.result) === null,
    );
    expect(failed.length).toBeGreaterThan(100);
    expect(failed.filter((r) => !r.theirs).length).toBe(failed.length);
  });

  it('each documented difference is real: the two disagree on some of its IBANs', () => {
    const reasons = new Map<string, number>();
    for (const r of rows) {
      const why = schwiftyDifference(r.iban, r.result);
      if (why !== null && r.result.valid !== r.theirs) reasons.set(why, (reasons.get(why) ?? 0) + 1);
    }
    expect(reasons.size).toBeGreaterThanOrEqual(5);
  });
});
