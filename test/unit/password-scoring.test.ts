// zxcvbn "most guessable match sequence" (Wheeler 2016): FastScoring equals the library's Scoring, match for match.
// @module-tag slow (left out of make test-fast): runs zxcvbn over generated text
import { createRequire } from 'node:module';
import { Options, ZxcvbnFactory } from '@zxcvbn-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sharedPrefixMatchers } from '../../src/adapters/password/zxcvbn/l33t.js';
import { FastScoring, type MatchSequence } from '../../src/adapters/password/zxcvbn/scoring.js';
import { createZxcvbn, zxcvbnOptions } from '../../src/adapters/password/zxcvbn-worker.js';

/** The library's own estimates are quadratic in the text length: seconds of CPU on a busy 2-core box. */
const SLOW = 180_000;

type Match = Parameters<FastScoring['mostGuessableMatchSequence']>[1][number];
interface Scorer {
  mostGuessableMatchSequence(password: string, matches: Match[], excludeAdditive?: boolean): MatchSequence;
}
const load = createRequire(import.meta.url);
const LibraryScoring = load('@zxcvbn-ts/core/dist/scoring/index.cjs') as new (options: Options) => Scorer;

/** The fields the brief comparison looks at, per sequence element. */
const outline = (result: MatchSequence) =>
  result.sequence.map(({ i, j, pattern, token, guesses, guessesLog10 }) => ({ i, j, pattern, token, guesses, guessesLog10 }));

const HAND_PICKED = [
  '', 'a', '7', '😀', 'Tr0ub4dor&3', 'p4r71c1p473', 'correcthorsebatterystaple', 'correct horse battery staple',
  '01'.repeat(20), '1984-07-21', '21/07/1984', '19840721', 'July 4 1976', '12.12.2012', 'qwertyuiop', '1qaz2wsx3edc',
  'zxcvbnm,./', 'qazwsxedc', 'asdfghjkl;', 'abcdefghijklmnop', '9876543210', 'acegikmo', 'aaaaaaaaaaaa', 'abcabcabcabc',
  'p@ssw0rd123!', 'iloveyou2024', 'Xy7!kq2#Lm9z', '4@310$!|7+8'.repeat(3), 'passwordiloveyouprincessrockyoujessica',
  'MondayJanuarySpringNorthRedJupiter', 'İSTANBUL1', '😀p4ss😀w0rd😀', 'drowssapyeknom',
];

/** Adversarial alphabets for generated text (code points, some outside the BMP). */
const ALPHABETS: Record<string, string[]> = {
  '"470"': [...'470'],
  'l33t characters': [...'4@310$!|7+85'],
  digits: [...'0123456789'],
  'common words run together': ['pass', 'word', 'love', 'you', 'the', 'ing', 'monkey', 'dragon', 'star', 'a', 'i', 'in', 'on', 'qwerty', '123'],
  'printable ASCII': Array.from({ length: 95 }, (_, k) => String.fromCharCode(32 + k)),
  'with non-BMP': [...'a1!😀𝔘🂡', '\u{10FFFF}', 'ß'],
};

/** Text of 1..max code points (any length in the range, not fast-check's default small sizes) (or word pieces, cut to max code points) from one alphabet. */
const text = (pieces: string[], max = 128) =>
  fc
    .array(fc.constantFrom(...pieces), { minLength: 1, maxLength: max, size: 'max' })
    .map((parts) => [...parts.join('')].slice(0, max).join(''));

describe('FastScoring is where the service scores', () => {
  it('the library factory uses the CommonJS Scoring that FastScoring extends', () => {
    const stock = new ZxcvbnFactory() as unknown as { scoring: object; matching: { matchers: { repeat: { scoring: object } } } };
    expect(stock.scoring.constructor).toBe(LibraryScoring);
    expect(stock.matching.matchers.repeat.scoring.constructor).toBe(LibraryScoring);
    expect(new FastScoring(new Options())).toBeInstanceOf(LibraryScoring);
  });

  it('createZxcvbn() installs it for the final pass and for the repeat matcher', () => {
    const factory = createZxcvbn() as unknown as { scoring: object; matching: { matchers: { repeat: { scoring: object } } } };
    expect(factory.scoring).toBeInstanceOf(FastScoring);
    expect(factory.matching.matchers.repeat.scoring).toBeInstanceOf(FastScoring);
    expect(factory.matching.matchers.repeat.scoring).not.toBe(factory.scoring);
  });
});

describe('FastScoring against the library Scoring on the same matches', () => {
  const factory = createZxcvbn();
  const options = (factory as unknown as { options: Options }).options;
  // One instance each for the whole run: buffers kept from a longer text must not leak into a shorter one.
  const library = new LibraryScoring(options);
  const fast = new FastScoring(options);

  /** Both results for one text; each side scores its own deep copy (the estimate adds fields to copies only). */
  function both(password: string, excludeAdditive: boolean): [MatchSequence, MatchSequence] {
    const matches = (factory as unknown as { main(password: string): Match[] }).main(password);
    return [
      library.mostGuessableMatchSequence(password, structuredClone(matches), excludeAdditive),
      fast.mostGuessableMatchSequence(password, structuredClone(matches), excludeAdditive),
    ];
  }

  function expectSame(password: string, excludeAdditive: boolean): void {
    const [expected, actual] = both(password, excludeAdditive);
    expect(actual.guesses).toBe(expected.guesses);
    expect(actual.guessesLog10).toBe(expected.guessesLog10);
    expect({ password, excludeAdditive, sequence: outline(actual) }).toEqual({ password, excludeAdditive, sequence: outline(expected) });
    // Every field of every element (dictionary ranks, variations, bruteforce tokens...), and the same key order.
    expect(actual).toStrictEqual(expected);
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
  }

  it.each([false, true])('hand-picked texts, excludeAdditive %s', (excludeAdditive) => {
    for (const password of HAND_PICKED) expectSame(password, excludeAdditive);
  }, SLOW);

  it.each(Object.entries(ALPHABETS))('generated text of 1..128 characters: %s', (_name, pieces) => {
    fc.assert(
      fc.property(text(pieces), fc.boolean(), (password, excludeAdditive) => expectSame(password, excludeAdditive)),
      { numRuns: 50, seed: 29 },
    );
  }, SLOW);

  it('the longest text the options allow (256 UTF-16 units)', () => {
    expectSame('😀'.repeat(128), false);
    expectSame('4@310$!|7+8'.repeat(24).slice(0, 256), false);
  }, SLOW);
});

describe('FastScoring against the library Scoring on crafted matches (ties, overflow, NaN, input order)', () => {
  // Matches that already carry guesses are returned by the estimate as they are: the sequence holds the input
  // objects themselves, so the exact winners of every tie can be compared by their index in the input.
  const GUESSES = [1, 2, 10, 11, 12, 50, 100, 10_000, 1e6, 1e150, Number.MAX_VALUE, Number.POSITIVE_INFINITY, Number.NaN];
  const crafted = fc.integer({ min: 0, max: 40 }).chain((n) =>
    fc.record({
      password: fc.string({ minLength: n, maxLength: n, unit: fc.constantFrom('a', 'b', '1') }),
      matches: fc.array(
        fc.record({ i: fc.nat(Math.max(0, n - 1)), span: fc.nat(6), guesses: fc.constantFrom(...GUESSES), pattern: fc.constantFrom('dictionary', 'date', 'repeat') }),
        { maxLength: n === 0 ? 0 : 60, size: 'max' },
      ),
      excludeAdditive: fc.boolean(),
    }),
  );

  it('picks the same matches with the same totals', () => {
    const options = new Options();
    const library = new LibraryScoring(options);
    const fast = new FastScoring(options);
    fc.assert(
      fc.property(crafted, ({ password, matches, excludeAdditive }) => {
        const input = matches.map(({ i, span, guesses, pattern }) => {
          const j = Math.min(password.length - 1, i + span);
          return { pattern, i, j, token: password.slice(i, j + 1), guesses, guessesLog10: Math.log10(guesses) } as Match;
        });
        const expected = library.mostGuessableMatchSequence(password, [...input], excludeAdditive);
        const actual = fast.mostGuessableMatchSequence(password, [...input], excludeAdditive);
        expect(actual.guesses).toBe(expected.guesses);
        expect(actual.sequence.map((m) => input.indexOf(m))).toEqual(expected.sequence.map((m) => input.indexOf(m)));
        expect(actual).toStrictEqual(expected);
      }),
      { numRuns: 400, seed: 29 },
    );
  }, SLOW);
});

describe('whole estimates with and without FastScoring', () => {
  const withFast = createZxcvbn();
  const stock = new ZxcvbnFactory(zxcvbnOptions(), sharedPrefixMatchers);

  function expectSameCheck(password: string): void {
    // calcTime is wall-clock time, the one field that may differ.
    const { calcTime: _ours, ...ours } = withFast.check(password);
    const { calcTime: _theirs, ...theirs } = stock.check(password);
    expect({ password, score: ours.score, guesses: ours.guesses, feedback: ours.feedback }).toEqual({
      password,
      score: theirs.score,
      guesses: theirs.guesses,
      feedback: theirs.feedback,
    });
    expect(ours).toStrictEqual(theirs);
  }

  it('hand-picked texts: score, guesses, sequence, feedback and crack times', () => {
    for (const password of HAND_PICKED) expectSameCheck(password);
  }, SLOW);

  it('generated texts (repeats score their base token with FastScoring too)', () => {
    const pieces = fc.oneof(...Object.values(ALPHABETS).map((alphabet) => text(alphabet, 64)));
    const repeated = fc.tuple(text(ALPHABETS['l33t characters'], 6), fc.integer({ min: 2, max: 12 }), text(ALPHABETS.digits, 8));
    fc.assert(
      fc.property(fc.oneof(pieces, repeated.map(([unit, times, tail]) => unit.repeat(times) + tail)), expectSameCheck),
      { numRuns: 60, seed: 29 },
    );
  }, SLOW);
});
