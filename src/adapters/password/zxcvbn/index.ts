// The room's public surface: a zxcvbn-ts factory with our matchers and scoring (same results as the library, see
// README.md here), the spans a cut must not split, and the per-check memos to drop. Nothing outside this folder
// touches @zxcvbn-ts/core's internals.
import { ZxcvbnFactory, type MatcherBaseClass, type Options, type OptionsType } from '@zxcvbn-ts/core';
import { repeatSpans, type Span } from '../../../domain/password.js';
import { forgetDictionaryMatches } from './dictionary.js';
import { SharedPrefixL33tMatcher, forgetL33tReadings, quickWordSequenceMatcher, sharedPrefixMatchers } from './l33t.js';
import { forgetRepeatedUnits, repeatMatcher } from './repeat.js';
import { useFastScoring } from './scoring.js';
import { buildWordTable, useWordTable, type WordTable } from './word-index.js';

export { buildWordTable, type WordTable };

/**
 * The library versions the differential tests (test/unit/password-l33t.test.ts, password-scoring.test.ts) were
 * verified against; package.json pins these exactly and test/unit/zxcvbn-versions.test.ts holds them equal.
 */
export const VERIFIED_VERSIONS: Readonly<Record<string, string>> = Object.freeze({
  '@zxcvbn-ts/core': '4.2.0',
  '@zxcvbn-ts/language-common': '4.1.3',
  '@zxcvbn-ts/language-en': '4.1.1',
  '@zxcvbn-ts/language-de': '3.0.2',
  '@zxcvbn-ts/language-fr': '4.1.2',
  '@zxcvbn-ts/language-es-es': '4.1.2',
});

/** The library's factory with the word-index dictionary and l33t matchers, the unit-once repeat matcher and the fast scoring. */
export function createFastZxcvbn(options: OptionsType): ZxcvbnFactory {
  return useFastScoring(new ZxcvbnFactory(options, { ...sharedPrefixMatchers, repeat: repeatMatcher }));
}

/**
 * The same factory reading its word lists from `table` (one copy in SharedArrayBuffers for every thread): the library
 * is given the lists' names with no words, so it builds no ranked lists of its own; our matchers are the only readers.
 */
export function createTableZxcvbn(table: WordTable, options: Omit<OptionsType, 'dictionary'>): ZxcvbnFactory {
  const dictionary = Object.fromEntries(table.names.map((name) => [name, [] as string[]]));
  useWordTable(dictionary, table);
  return createFastZxcvbn({ ...options, dictionary });
}

/** Drop what the matchers memoise within one check; call after every check (or cut search) is done. */
export function forgetCheckMemos(): void {
  forgetL33tReadings();
  forgetRepeatedUnits();
  forgetDictionaryMatches();
}

/** A factory's private parts read here: its options and matchers (l33t.ts registers some). */
interface FactoryParts {
  options: Options;
  matching: { matchers: Record<string, { match: MatcherBaseClass['match'] }> };
}

/**
 * l33t readings looked at around a cut. In a long text the library's 100 readings differ only in its last
 * substitutions, so a word in its middle is found in the first reading or not at all; the next readings of the
 * text around the cut differ at its end, past any word across the cut.
 */
const CUT_L33T_READINGS = 1;
const cutMatchers = new WeakMap<ZxcvbnFactory, Array<{ match: MatcherBaseClass['match'] }>>();

/**
 * zxcvbn's longest date is 10 characters ("11/11/1991"): a date that a cut at q splits lies within 9 of q, and so
 * does any date containing it (the date matcher drops dates inside another).
 */
const DATE_REACH = 9;

/**
 * Words (plain, reversed and l33t), word sequences ("one two three"), dates and repeats in `text`: what a cut must
 * not split, since the part before the cut would be priced as random characters or as one more match. Sequences
 * ("abcdef") and keyboard walks ("qwerty") are not looked for: their first part is one again, or a character or two.
 * Every one a cut from `lowest` to `highest` splits is found (others may be).
 */
export function spansAround(zxcvbn: ZxcvbnFactory, text: string, lowest: number, highest: number): Span[] {
  const { options, matching } = zxcvbn as unknown as FactoryParts;
  let quick = cutMatchers.get(zxcvbn);
  if (!quick) {
    quick = [new SharedPrefixL33tMatcher(options, false, CUT_L33T_READINGS), quickWordSequenceMatcher(options, CUT_L33T_READINGS)];
    cutMatchers.set(zxcvbn, quick);
  }
  const spans: Span[] = repeatSpans(text);
  const request = { password: text, omniMatch: matching as never, userInputsOptions: undefined };
  for (const matcher of quick) spans.push(...(matcher.match(request) as Span[]));
  for (const name of ['dictionary', 'dictionaryReverse']) spans.push(...(matching.matchers[name].match(request) as Span[]));
  // Dates only near the cuts: on a long run of digits the date matcher reads every 4-10 character window.
  const from = Math.max(0, lowest - DATE_REACH);
  const window = text.slice(from, highest + DATE_REACH);
  for (const date of matching.matchers.date.match({ ...request, password: window }) as Span[]) spans.push({ i: date.i + from, j: date.j + from });
  return spans;
}
