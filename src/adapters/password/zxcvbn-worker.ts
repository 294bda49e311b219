// Worker-thread task: zxcvbn-ts password strength estimate (common and en dictionaries; de, fr, es-es on request).
import { isMainThread, workerData } from 'node:worker_threads';
import { ZxcvbnFactory, type MatcherBaseClass, type Options, type OptionsType } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';
import * as de from '@zxcvbn-ts/language-de';
import * as fr from '@zxcvbn-ts/language-fr';
import * as esEs from '@zxcvbn-ts/language-es-es';
import {
  ESTIMATED_CHARS,
  MAX_ANALYSED_CHARS,
  chooseCut,
  codePoints,
  collapseRepeats,
  repeatSpans,
  truncateForAnalysis,
  type Span,
  type Strength,
} from '../../domain/password.js';
import { SharedPrefixL33tMatcher, forgetL33tReadings, quickWordSequenceMatcher, sharedPrefixMatchers } from './zxcvbn/l33t.js';
import { forgetDictionaryMatches } from './zxcvbn/dictionary.js';
import { forgetRepeatedUnits, repeatMatcher } from './zxcvbn/repeat.js';
import { useFastScoring } from './zxcvbn/scoring.js';

/**
 * The library's default number of l33t readings per password: fewer stops l33t matching early and overstates
 * heavily substituted passwords ("p4r71c1p473" scored 4 with 2, 1 with 100). The speed comes from elsewhere
 * (docs/adr/0016-honest-password-scores.md, bench/zxcvbn-timing.ts): Levenshtein off (it multiplies the cost
 * ~10x), the word-index dictionary and l33t matchers (the library's matches for a fraction of the lookups), long
 * repeats collapsed before analysis, the library's scoring search on typed arrays, and at most 32 characters estimated.
 */
export const L33T_MAX_SUBSTITUTIONS = 100;

/** Big word lists taken from the de, fr and es-es packages. */
const EXTRA_LIST = /^(commonWords|firstnames|lastnames|wikipedia)-/;

/**
 * de, fr and es-es contribute their word lists but not their word-sequence lists (numbers, months,
 * colours...): those run a second full dictionary + l33t + reverse pass and tripled the per-call cost.
 * language-de 3.x names its lists without a language suffix; they get "-de" like the 4.x packages.
 */
function extraLists(dictionary: Record<string, string[]>, suffix: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, words] of Object.entries(dictionary)) {
    const key = name.endsWith(suffix) ? name : `${name}${suffix}`;
    if (EXTRA_LIST.test(key)) out[key] = words;
  }
  return out;
}

/** Passed by the pool as piscina workerData. */
export interface ZxcvbnWorkerData {
  /** Add the de, fr and es-es word lists (default false); about doubles the per-call cost. */
  extraLanguages?: boolean;
}

/** The zxcvbn options the service uses; exported for the timing bench. */
export function zxcvbnOptions(extraLanguages = false): OptionsType {
  const extra = extraLanguages
    ? {
        ...extraLists(de.dictionary, '-de'),
        ...extraLists(fr.dictionary, '-fr'),
        ...extraLists(esEs.dictionary, '-es-es'),
      }
    : {};
  return {
    translations: en.translations,
    graphs: common.adjacencyGraphs,
    dictionary: { ...common.dictionary, ...en.dictionary, ...extra },
    useLevenshteinDistance: false,
    l33tMaxSubstitutions: L33T_MAX_SUBSTITUTIONS,
    // Backstop only: callers already cut to MAX_ANALYSED_CHARS code points (at most 2 UTF-16 units each).
    maxLength: MAX_ANALYSED_CHARS * 2,
  };
}

/**
 * The estimator the service uses: its options, the shared-prefix l33t matchers, the repeat matcher that estimates a
 * unit once, and the library's scoring without its quadratic overhead (same results); exported for bench and tests.
 */
export function createZxcvbn(extraLanguages = false): ZxcvbnFactory {
  return useFastScoring(new ZxcvbnFactory(zxcvbnOptions(extraLanguages), { ...sharedPrefixMatchers, repeat: repeatMatcher }));
}

/** Length of the longest word in the options' lists (23 for common + en). */
export function longestWordOf(options: OptionsType): number {
  let longest = 0;
  for (const list of Object.values(options.dictionary ?? {})) for (const word of list) longest = Math.max(longest, String(word).length);
  return longest;
}

let factory: ZxcvbnFactory | undefined;
let longestWord = 0;

function getFactory(): ZxcvbnFactory {
  const data = (isMainThread ? undefined : workerData) as ZxcvbnWorkerData | undefined;
  if (!factory) {
    const extra = data?.extraLanguages === true;
    factory = createZxcvbn(extra);
    longestWord = longestWordOf(zxcvbnOptions(extra));
  }
  return factory;
}

/** What is analysed of a password: its first MAX_ANALYSED_CHARS code points, long repeats collapsed. */
export function analysedText(password: string): string {
  getFactory();
  return collapseRepeats(truncateForAnalysis(String(password)), longestWord);
}

/** A factory's private parts read here: its options and matchers (src/adapters/password/zxcvbn/l33t.ts registers some). */
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
 * Every one a cut from `lowest` to `highest` splits is found (others may be); exported for the tests.
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

/**
 * zxcvbn's result for an analysed text: the whole of it up to ESTIMATED_CHARS code points; a longer text is cut
 * between a longest word before that length and that length, where no word, word sequence, repeat or date found
 * there is split (chooseCut), and the part before the cut is estimated. Exported for the bench.
 */
export function checkAnalysed(zxcvbn: ZxcvbnFactory, analysed: string, longest = longestWord): ReturnType<ZxcvbnFactory['check']> {
  try {
    if (codePoints(analysed) <= ESTIMATED_CHARS) return zxcvbn.check(analysed);
    const highest = truncateForAnalysis(analysed, ESTIMATED_CHARS).length;
    const lowest = truncateForAnalysis(analysed, Math.max(1, ESTIMATED_CHARS - longest)).length;
    const around = truncateForAnalysis(analysed, ESTIMATED_CHARS + longest);
    return zxcvbn.check(analysed.slice(0, chooseCut(around, lowest, highest, spansAround(zxcvbn, around, lowest, highest))));
  } finally {
    forgetL33tReadings();
    forgetRepeatedUnits();
    forgetDictionaryMatches();
  }
}

/** Estimate one password; only derived numbers and feedback text come back, never the password. */
export function estimateStrength(password: string): Strength {
  const result = checkAnalysed(getFactory(), analysedText(password));
  const fast = result.crackTimes.offlineFastHashingXPerSecond;
  return {
    score: result.score,
    guesses: result.guesses,
    crackTimeSeconds: fast.seconds,
    crackTimeDisplay: fast.display,
    warning: result.feedback.warning ?? '',
    suggestions: [...result.feedback.suggestions],
  };
}

/** Build the dictionaries and run one throw-away check so the first request pays no start-up cost. */
export function warmUp(): void {
  getFactory().check('warm-up Tr0ub4dor&3 correct horse');
}

// Warm once per worker at start-up, not on the first request.
if (!isMainThread) warmUp();

/** Piscina task entry point: the password arrives as an in-memory message. */
export default function task(password: string): Strength {
  return estimateStrength(password);
}
