// Worker-thread task: zxcvbn-ts password strength estimate (common and en dictionaries; de, fr, es-es on request).
import { createRequire } from 'node:module';
import { isMainThread, workerData } from 'node:worker_threads';
import type { OptionsType, ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';
import {
  ESTIMATED_CHARS,
  MAX_ANALYSED_CHARS,
  chooseCut,
  codePoints,
  collapseRepeats,
  truncateForAnalysis,
  type Strength,
} from '../../domain/password.js';
import { createFastZxcvbn, forgetCheckMemos, spansAround } from './zxcvbn/index.js';

/**
 * The library's default number of l33t readings per password: fewer stops l33t matching early and overstates
 * heavily substituted passwords ("p4r71c1p473" scored 4 with 2, 1 with 100). The speed comes from elsewhere
 * (docs/adr/0016-honest-password-scores.md): Levenshtein off (it multiplies the cost many times), the word-index dictionary and l33t matchers (the library's matches for a fraction of the lookups), long
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

/**
 * A language package's word lists, loaded only when asked for: de, fr and es-es hold ~260k words that every worker
 * thread would otherwise parse and keep (PASSWORD_EXTRA_LANGUAGES is off by default). Their CommonJS builds, which
 * `import` resolves to as well (the packages name no exports).
 */
const require = createRequire(import.meta.url);
const wordLists = (name: string): Record<string, string[]> => (require(name) as { dictionary: Record<string, string[]> }).dictionary;

/** The zxcvbn options the service uses; exported for the timing bench. */
export function zxcvbnOptions(extraLanguages = false): OptionsType {
  const extra = extraLanguages
    ? {
        ...extraLists(wordLists('@zxcvbn-ts/language-de'), '-de'),
        ...extraLists(wordLists('@zxcvbn-ts/language-fr'), '-fr'),
        ...extraLists(wordLists('@zxcvbn-ts/language-es-es'), '-es-es'),
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
  return createFastZxcvbn(zxcvbnOptions(extraLanguages));
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
    forgetCheckMemos();
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
