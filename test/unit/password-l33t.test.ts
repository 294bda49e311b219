// Password scores are never overstated: the service's zxcvbn set-up against the library's defaults
// (l33t readings, repeated runs), and the shared-prefix l33t matcher against the library's own.
// @module-tag slow (left out of make test-fast): runs zxcvbn over generated text
import { createRequire } from 'node:module';
import { Options, ZxcvbnFactory, type MatcherBaseClass, type OptionsType } from '@zxcvbn-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WordFilteredDictionaryMatcher, WordFilteredReverseMatcher, dictionaryMatchesHeld, forgetDictionaryMatches } from '../../src/adapters/password/zxcvbn/dictionary.js';
import { SharedPrefixL33tMatcher, l33tReadingsHeld } from '../../src/adapters/password/zxcvbn/l33t.js';
import { substitutedReadings } from '../../src/adapters/password/zxcvbn/readings.js';
import { chooseCut, collapseRepeats, ESTIMATED_CHARS, MAX_ANALYSED_CHARS, type Span } from '../../src/domain/password.js';
import { analysedText, checkAnalysed, createZxcvbn, estimateStrength, longestWordOf, zxcvbnOptions } from '../../src/adapters/password/zxcvbn-worker.js';
import { spansAround } from '../../src/adapters/password/zxcvbn/index.js';
import { repeatedUnitsHeld } from '../../src/adapters/password/zxcvbn/repeat.js';

/** Several seconds of CPU in all on a busy 2-core box (the library's default l33t pass is the slow part). */
const SLOW = 120_000;

/** The library's defaults (100 l33t readings, no length cut below 256) with the service's word lists. */
function libraryDefault(): ZxcvbnFactory {
  const { translations, graphs, dictionary } = zxcvbnOptions();
  return new ZxcvbnFactory({ translations, graphs, dictionary } satisfies OptionsType);
}

/** Common words and names with heavy l33t substitutions; the first three scored 4, 4 and 2 with 2 readings. */
const L33T = [
  'p4r71c1p473', 'd157r18u710n', 'j3nn1f3r', 'p@ssw0rd', 'p455w0rd', 'm0nk3y', 'dr4g0n', '5up3rm4n', 'b4tm4n',
  'l3tm31n', 'tr0ub4d0r', '5h4d0w', 'm1ch43l', 'j3551c4', '4sh13y', 'n1nj4', 'ch33s3', 'c0mput3r', '1nt3rn3t',
  'w3lc0m3', 'f00tb4ll', 'b4s3b4ll', '50cc3r', 'h0ck3y', 'pr1nc355', 'sunsh1n3', '5t4rw4r5', 'th0m4s', '4m4nd4',
  'l0v3ly', 'fr33d0m', 'wh4t3v3r', 'b1rthd4y', '3l3ph4nt', '5p1d3rm4n', '|<1773n', '7r4v3l', '54mu3l', 'Tr0ub4dor&3',
];

describe('l33t passwords', () => {
  it(`score no higher than the library's defaults (${L33T.length} passwords)`, () => {
    const reference = libraryDefault();
    const over = L33T.map((pw) => ({ pw, ours: estimateStrength(pw).score, library: reference.check(pw).score })).filter(
      (r) => r.ours > r.library,
    );
    expect(over).toEqual([]);
  }, SLOW);

  it.each([
    ['p4r71c1p473', 1],
    ['d157r18u710n', 1],
    ['j3nn1f3r', 0],
  ])('%s scores %i, as the library and the original zxcvbn do', (pw, score) => {
    expect(estimateStrength(pw).score).toBe(score);
  }, SLOW);
});

describe('shared-prefix l33t matcher', () => {
  // Same options as the service, once with the library's own l33t and word-sequence matchers.
  const options = zxcvbnOptions();
  const ours = createZxcvbn();
  const library = new ZxcvbnFactory(options);

  it('finds exactly what the library finds: same guesses, score and match sequence', () => {
    const inputs = [
      ...L33T,
      'Xy7!kq2#Lm9z', 'p@55w0rd1!3$', 'correct horse battery staple', 'nnonk3y', '()()()|-|', '1|<3 |-|1m',
      'oneTwoThree', '0n3-7w0-7hr33', 'İSTANBUL1', 'ΑΣ0Σ', '😀p4ss😀', '4@310$!|7+8', '0101010101Zq8#vLm2',
      // Longer text for the word-index dictionary matchers: words, reversed words, 23/24/25 characters (the longest
      // word and one or two more), sequences, random characters.
      'passwordiloveyouprincessrockyoujessicamichael', 'drowssapyeknomnogard', 'correcthorsebatterystaple',
      'abcdefghijklmnopqrstuvw', 'abcdefghijklmnopqrstuvwx', 'abcdefghijklmnopqrstuvwxy', 'abcdefghijklmnopqrstuvwxyz0123456789',
      'q8#Lm2!vR7wXk4zP9@tN3$yB6^hJ1&cF5*sD0(gA', 'MondayJanuarySpringNorthRedJupiter', 'Xy7!kq2#Lm9zXy7!kq2#Lm9z',
      // Repeated units met again (each estimated once per password, src/adapters/password/zxcvbn/repeat.ts).
      '4747x0000y7070z4747w00007070', 'abab!!abab??ab', '007744770074700447704', 'zzzzqqzzzzqq',
    ];
    const differences = inputs.filter((pw) => {
      const a = ours.check(pw);
      const b = library.check(pw);
      return a.guesses !== b.guesses || a.score !== b.score || JSON.stringify(a.sequence) !== JSON.stringify(b.sequence);
    });
    expect(differences).toEqual([]);
  }, SLOW);

  it('a run of any printable ASCII character (a unit estimated once at start) scores as with the library', () => {
    const differences: string[] = [];
    for (let code = 0x20; code < 0x7f; code += 1) {
      const pw = `${String.fromCharCode(code).repeat(4)}Qz`;
      const a = ours.check(pw);
      const b = library.check(pw);
      if (a.guesses !== b.guesses || JSON.stringify(a.sequence) !== JSON.stringify(b.sequence)) differences.push(pw);
    }
    expect(differences).toEqual([]);
  }, SLOW);

  it('keeps nothing of a password once its estimate is over (no readings, no repeated units)', () => {
    for (const pw of ['4747x0000y7070z4747', 'p4ssw0rdp4ssw0rd', `${'abc'.repeat(9)}v3rw4ltung5g3m31n5ch4ft`]) {
      checkAnalysed(ours, analysedText(pw));
      const scoring = (ours as unknown as { scoring: { password: string } }).scoring;
      const held = { readings: l33tReadingsHeld(), units: repeatedUnitsHeld(), words: dictionaryMatchesHeld(), scored: scoring.password };
      expect({ pw, ...held }).toEqual({ pw, readings: false, units: 0, words: false, scored: '' });
    }
    ours.check('4747x0000y7070z4747');
    expect(repeatedUnitsHeld()).toBeGreaterThan(0);
    expect(dictionaryMatchesHeld()).toBe(true);
  }, SLOW);

  it('reads the user-input list as the library does', () => {
    const inputs = ['katelover', 'bigcorp', 'averyveryverylonguserinputword'];
    for (const pw of ['k4t3l0v3r', 'b1gc0rp2024', 'KateLover', 'xxbigcorpyy', 'averyveryverylonguserinputword', 'drowssaprocgib']) {
      const a = ours.check(pw, inputs);
      const b = library.check(pw, inputs);
      expect(a.guesses).toBe(b.guesses);
      expect(a.sequence).toEqual(b.sequence);
    }
  }, SLOW);
});

describe('word-index dictionary matchers', () => {
  // The library's own matchers, to compare every match (not only the ones the best sequence keeps).
  const load = createRequire(import.meta.url);
  type MatcherClass = new (options: Options, wordSequenceOnly?: boolean) => MatcherBaseClass;
  const library = {
    dictionary: load('@zxcvbn-ts/core/dist/matcher/dictionary/matching.cjs') as MatcherClass,
    reverse: load('@zxcvbn-ts/core/dist/matcher/dictionary/variants/matching/reverse.cjs') as MatcherClass,
    l33t: load('@zxcvbn-ts/core/dist/matcher/dictionary/variants/matching/l33t.cjs') as MatcherClass,
  };
  const options = new Options(zxcvbnOptions());
  const inputs = [
    'password', 'Tr0ub4dor&3x', 'p@55w0rd1!3$', 'drowssap', 'passwordiloveyouprincessrockyou', 'abcdefghijklmnopqrstuvw',
    'abcdefghijklmnopqrstuvwx', 'abcdefghijklmnopqrstuvwxyz0123456789', 'q8#Lm2!vR7wXk4zP9@tN3$yB6^hJ1&cF5*sD0(gA',
    'MondayJanuarySpringNorthRedJupiter', 'oneTwoThreefourfive', '0101010101Zq8#vLm2', '4@310$!|7+84@310$!|7+8', 'İSTANBUL',
    '😀p4ss😀', 'a', '',
  ];
  const userInputs = options.getUserInputsOptions(['katelover', 'averyveryverylonguserinputword']);
  const cases: Array<[string, MatcherClass, MatcherClass]> = [
    ['dictionary', WordFilteredDictionaryMatcher, library.dictionary],
    ['reversed dictionary', WordFilteredReverseMatcher, library.reverse],
    ['l33t', SharedPrefixL33tMatcher, library.l33t],
  ];

  /** Both matchers' matches for `password` must be equal, in order; ours are returned. */
  function expectSameMatches(ours: MatcherBaseClass, theirs: MatcherBaseClass, password: string, user = options.getUserInputsOptions()) {
    const a = ours.match({ password, userInputsOptions: user, omniMatch: undefined as never });
    const b = theirs.match({ password, userInputsOptions: user, omniMatch: undefined as never });
    expect({ password, matches: a }).toEqual({ password, matches: b });
    return a as unknown[];
  }

  it.each(cases)('%s: the same matches in the same order as the library, with and without user inputs', (_name, Ours, Theirs) => {
    for (const wordSequenceOnly of [false, true]) {
      const ours = new Ours(options, wordSequenceOnly);
      const theirs = new Theirs(options, wordSequenceOnly);
      for (const password of [...inputs, 'xxkateloveryy', 'averyveryverylonguserinputword']) {
        for (const user of [options.getUserInputsOptions(), userInputs]) {
          const a = ours.match({ password, userInputsOptions: user, omniMatch: undefined as never });
          const b = theirs.match({ password, userInputsOptions: user, omniMatch: undefined as never });
          expect({ password, wordSequenceOnly, matches: a }).toEqual({ password, wordSequenceOnly, matches: b });
        }
      }
    }
  }, SLOW);

  it.each(cases)('%s: the same matches as the library on generated text (l33t-dense, words, any code unit)', (_name, Ours, Theirs) => {
    const ours = new Ours(options);
    const theirs = new Theirs(options);
    const pieces = fc.oneof(
      fc.constantFrom('pass', 'word', '4', '@', '3', '1', '0', '$', '!', '|', '7', '+', '8', '5', '|<', 'ing', 'the', 'love', 'Z'),
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 10 }), (parts) => {
        const password = parts.join('').slice(0, 32);
        const user = options.getUserInputsOptions();
        const a = ours.match({ password, userInputsOptions: user, omniMatch: undefined as never });
        const b = theirs.match({ password, userInputsOptions: user, omniMatch: undefined as never });
        expect(a).toEqual(b);
      }),
      { numRuns: 150, seed: 29 },
    );
  }, SLOW);

  it.each(cases.slice(0, 2))('%s: a text that begins the last one matched gets the same matches as the library', (_name, Ours, Theirs) => {
    const ours = new Ours(options);
    const theirs = new Theirs(options);
    const pieces = fc.oneof(fc.constantFrom('pass', 'word', 'drow', 'ssap', 'love', 'evol', 'the', 'ing', 'x', '1', ' '), fc.string({ maxLength: 3 }));
    let reused = 0;
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 14 }), fc.nat(60), (parts, cut) => {
        const text = parts.join('').slice(0, 55);
        const prefix = text.slice(0, Math.min(cut, text.length));
        expectSameMatches(ours, theirs, text);
        const a = expectSameMatches(ours, theirs, prefix);
        if (a.length > 0 && prefix.length < text.length && /^[\x00-\x7f]*$/.test(text)) reused += 1;
        forgetDictionaryMatches();
      }),
      { numRuns: 300, seed: 43 },
    );
    expect(reused).toBeGreaterThan(30); // prefixes with matches of ASCII texts, the ones taken from the last text
    expect(dictionaryMatchesHeld()).toBe(false);
  }, SLOW);

  it('readings: the same substituted readings, in the same order, as the library (generated text, limits 1 to 100)', () => {
    const libraryReadings = load('@zxcvbn-ts/core/dist/matcher/dictionary/variants/matching/unmunger/getCleanPasswords.cjs') as typeof substitutedReadings;
    const pieces = fc.oneof(
      fc.constantFrom('4', '@', '3', '1', '0', '$', '!', '|', '7', '+', '8', '5', '|<', '|-|', '()', '/\\', '^^', 'nn', 'uu', '((', '11', '1111', 'a', 'Z'),
      fc.string({ unit: 'binary', maxLength: 2 }),
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 24 }), fc.constantFrom(1, 3, 10, 100), (parts, limit) => {
        const password = parts.join('').slice(0, 48);
        expect(substitutedReadings(password, limit, options.trieNodeRoot)).toEqual(libraryReadings(password, limit, options.trieNodeRoot));
      }),
      { numRuns: 400, seed: 37 },
    );
  });

  it('l33t: the same matches as the library on 40-character text dense in l33t characters (readings repeat windows)', () => {
    const ours = new SharedPrefixL33tMatcher(options);
    const theirs = new library.l33t(options);
    let state = 7;
    const next = (n: number): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    for (const alphabet of ['470', '4@310$!|7+85', '01', '|<3', 'a4@s$5 ']) {
      for (let k = 0; k < 3; k += 1) {
        expectSameMatches(ours, theirs, Array.from({ length: 40 }, () => alphabet[next(alphabet.length)]).join(''));
      }
    }
  }, SLOW);

  it.each([100, 1])("l33t, %i readings: the word-sequence pass right after the pass over every list (its matches taken from that pass) is the library's", (readings) => {
    const everyList = new SharedPrefixL33tMatcher(options, false, readings);
    const wordSequence = new SharedPrefixL33tMatcher(options, true, readings);
    const theirs = new library.l33t(readings === options.l33tMaxSubstitutions ? options : new Options({ ...zxcvbnOptions(), l33tMaxSubstitutions: readings }), true);
    const pieces = fc.oneof(
      fc.constantFrom('one', 'tw0', 'thr33', 'f0ur', 'f1v3', 's3v3n', 'n1n3', 'january', 'm0nday', '4', '@', '3', '1', '0', '7', '|<', 'Z'),
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    let reused = 0;
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
        const password = parts.join('').slice(0, 40);
        const all: unknown[] = everyList.match({ password, userInputsOptions: options.getUserInputsOptions(), omniMatch: undefined as never });
        const a = expectSameMatches(wordSequence, theirs, password);
        if (a.length > 0 && a.every((m) => all.includes(m))) reused += 1;
      }),
      { numRuns: 200, seed: 31 },
    );
    expect(reused).toBeGreaterThan(20);
  }, SLOW);

  it.each(cases)('%s: the same matches with the de, fr and es-es lists too (32 lists)', (_name, Ours, Theirs) => {
    const extra = new Options(zxcvbnOptions(true));
    expect(Object.keys(extra.rankedDictionaries).length).toBeGreaterThanOrEqual(32);
    const ours = new Ours(extra);
    const theirs = new Theirs(extra);
    for (const password of ['schmetterling', 'p4p1ll0nbl3u', 'mariposaazulverwaltungsgemeinschaft', 'Xy7!kq2#Lm9z']) {
      expectSameMatches(ours, theirs, password, extra.getUserInputsOptions());
    }
  }, SLOW);
});

describe('collapseRepeats', () => {
  const longest = longestWordOf(zxcvbnOptions());

  it('the service lists have words up to 23 characters', () => {
    expect(longest).toBe(23);
  });

  it('keeps a long run to the fewest whole units that hold every 23-character piece', () => {
    // "01": 12 units = 24 characters >= 23 + 2 - 1.
    expect(collapseRepeats(`${'01'.repeat(60)}Zq8#vLm2`, longest)).toBe(`${'01'.repeat(12)}Zq8#vLm2`);
    expect(collapseRepeats('a'.repeat(128), longest)).toBe('a'.repeat(23));
    // An 11-character unit: 3 units = 33 >= 23 + 11 - 1; the partial unit after the run stays.
    const unit = '4@310$!|7+8';
    expect(collapseRepeats(unit.repeat(12).slice(0, 128), longest)).toBe(unit.repeat(3) + unit.slice(0, 7));
  });

  it('leaves text without long runs unchanged', () => {
    for (const pw of ['Tr0ub4dor&3x', 'aaa', 'abababab', 'x'.repeat(23), 'correct horse battery staple']) {
      expect(collapseRepeats(pw, longest)).toBe(pw);
    }
  });

  it('keeps what surrounds a run and never splits a surrogate pair', () => {
    expect(collapseRepeats(`pre${'xy'.repeat(40)}post`, longest)).toBe(`pre${'xy'.repeat(12)}post`);
    const out = collapseRepeats(`a${'😀'.repeat(100)}b`, longest);
    expect(out).toBe(`a${'😀'.repeat(12)}b`);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it('never raises a score: collapsed text scores at most what the library gives the whole text', () => {
    const reference = libraryDefault();
    const ours = createZxcvbn();
    const cases = [
      `${'01'.repeat(30)}Zq8#`,
      `Qx${'ab'.repeat(20)}!9`,
      `${'a'.repeat(40)}`,
      `K9#${'z'.repeat(30)}vLm`,
      `${'love'.repeat(10)}2024`,
      `${'qwer'.repeat(9)}T`,
      `Xy${'123'.repeat(12)}`,
      `${'p@ss'.repeat(8)}w0rd`,
      `m0nk3y${'!'.repeat(30)}`,
      `${'2024'.repeat(8)}`,
      `${'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(3)}`,
      `Q${`${'monkey'}Zq8#vLm2dragon!`.repeat(4)}`,
    ];
    const raised = cases.filter((pw) => {
      const collapsed = collapseRepeats(pw, longest);
      expect(collapsed.length).toBeLessThan(pw.length);
      return ours.check(collapsed).score > reference.check(pw).score;
    });
    expect(raised).toEqual([]);
  }, SLOW);

  it('is applied after the cut to the first MAX_ANALYSED_CHARS characters', () => {
    expect(MAX_ANALYSED_CHARS).toBe(128);
    const pw = `${'01'.repeat(64)}tail-after-the-cut`;
    expect(estimateStrength(pw).guesses).toBe(createZxcvbn().check('01'.repeat(12)).guesses);
  }, SLOW);
});

describe('long text cut where no match is split', () => {
  const whole = createZxcvbn();
  const WORD = 'verwaltungsgemeinschaft'; // 23 characters, in the English Wikipedia list
  const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';
  const REVERSED = 'zyxwvutsrqponmlkjihgfedcba';

  it('a cut through a long word would overstate the score; the cut keeps at most its first letter', () => {
    // A cut after 32 characters splits the first copy of the word: brute force for its first 17 characters, where
    // the whole text (a repeat and a word said twice) needs ~1e7 guesses and scores 2.
    const text = `${'abc'.repeat(5)}${WORD}${WORD}`;
    const analysed = analysedText(text);
    expect(analysed.length).toBeGreaterThan(ESTIMATED_CHARS);
    expect(whole.check(analysed).score).toBe(2);
    expect(whole.check(analysed.slice(0, ESTIMATED_CHARS)).score).toBe(4);
    expect(estimateStrength(text).score).toBeLessThanOrEqual(2);
    // At most one letter of the word: a two-letter word may span the repeat's last letter and the word's first.
    expect(checkAnalysed(whole, analysed, 23).password.length).toBeLessThanOrEqual(16);
  }, SLOW);

  it('a cut through a word sequence would overstate the score; the cut keeps at most one letter of it', () => {
    // "dragon monkey" is one word-sequence match (Chinese zodiac); cut inside it, "dragon" and a random " m" remain.
    const text = 'window window window dragon monkey';
    const analysed = analysedText(text);
    expect(whole.check(analysed).score).toBe(2);
    expect(whole.check(analysed.slice(0, 29)).score).toBe(3);
    expect(estimateStrength(text).score).toBeLessThanOrEqual(2);
  }, SLOW);

  /** Deterministic pieces for texts a client could send: words, l33t, sequences, keyboard walks, dates, random. */
  function pieces(seed: number): () => string {
    let state = seed;
    const next = (n: number): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    const kinds = [
      () => ['password', 'iloveyou', 'princess', WORD, 'monkey', 'dragon', 'sunshine', 'football', 'jessica'][next(9)],
      () => ['p@55w0rd', 'm0nk3y', '5up3rm4n', 'dr4g0n', 'l3tm31n'][next(5)],
      () => ALPHABET.slice(next(10), 10 + next(16)),
      () => ['qwertyuiop', 'asdfghjkl', '1qaz2wsx3edc', 'zxcvbnm'][next(4)],
      () => `${1950 + next(75)}`,
      () => Array.from({ length: 3 + next(12) }, () => String.fromCharCode(33 + next(94))).join(''),
      () => REVERSED.slice(0, 5 + next(20)),
      () => ['one two three', 'monday tuesday', 'dragon monkey', 'north east', 'v3rw4ltung5g3m31n5ch4ft', 'abcabcabc'][next(6)],
      () => `${1 + next(28)}/${1 + next(12)}/${1950 + next(75)}`,
      () => ' ',
    ];
    return () => kinds[next(kinds.length)]();
  }

  it('never scores above the whole text (seeded texts of 33-128 characters)', () => {
    const raised: string[] = [];
    for (let seed = 1; seed <= 160; seed += 1) {
      const piece = pieces(seed);
      let text = '';
      while (text.length < 33 + (seed % 9) * 11) text += piece();
      const cut = estimateStrength(text).score;
      if (cut > whole.check(analysedText(text)).score) raised.push(text);
    }
    expect(raised).toEqual([]);
  }, SLOW);

  it('the spans around a cut hold every date that a cut splits: the cut is the one all dates give', () => {
    const date = (whole as unknown as { matching: { matchers: Record<string, MatcherBaseClass> } }).matching.matchers.date;
    let state = 41;
    const next = (n: number): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    const parts = [() => `${next(10)}`, () => `${1 + next(28)}/${1 + next(12)}/${1950 + next(75)}`, () => `${1 + next(12)}.${1 + next(28)}.${next(100)}`, () => '-'];
    let moved = 0;
    for (let k = 0; k < 150; k += 1) {
      let text = '';
      while (text.length < 55) text += parts[next(parts.length)]();
      text = text.slice(0, 55);
      const [lowest, highest] = [9 + next(5), 28 + next(5)];
      const spans = spansAround(whole, text, lowest, highest);
      const everyDate = date.match({ password: text, omniMatch: undefined as never, userInputsOptions: undefined as never }) as Span[];
      expect({ text, cut: chooseCut(text, lowest, highest, spans) }).toEqual({ text, cut: chooseCut(text, lowest, highest, [...spans, ...everyDate]) });
      if (chooseCut(text, lowest, highest, everyDate) !== highest) moved += 1;
    }
    expect(moved).toBeGreaterThan(30); // the texts do have dates across the cut range
  }, SLOW);

  it('a long strong text is estimated on its first ESTIMATED_CHARS characters', () => {
    const text = Array.from({ length: 128 }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 94))).join('');
    const cut = checkAnalysed(whole, text, 23).password.length;
    expect(cut).toBeGreaterThanOrEqual(ESTIMATED_CHARS - 23);
    expect(cut).toBeLessThanOrEqual(ESTIMATED_CHARS);
    const prefix = whole.check(text.slice(0, cut));
    expect(prefix.score).toBe(4);
    expect(estimateStrength(text)).toMatchObject({ score: 4, guesses: prefix.guesses });
  }, SLOW);
});
