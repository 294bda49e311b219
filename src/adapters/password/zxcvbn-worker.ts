// Worker-thread task: zxcvbn-ts password strength estimate (common and en dictionaries; de, fr, es-es on request).
import { createRequire } from 'node:module';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { OptionsType, ZxcvbnFactory } from '@zxcvbn-ts/core';
import {
  ESTIMATED_CHARS,
  MAX_ANALYSED_CHARS,
  chooseCut,
  codePoints,
  collapseRepeats,
  truncateForAnalysis,
  type Strength,
} from '../../domain/password.js';
import { buildWordTable, createFastZxcvbn, createTableZxcvbn, forgetCheckMemos, spansAround, type WordTable } from './zxcvbn/index.js';

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

/** The word lists in SharedArrayBuffers, and the small parts of the options: what every worker thread reads. */
export interface SharedZxcvbnData {
  table: WordTable;
  translations: OptionsType['translations'];
  graphs: OptionsType['graphs'];
}

/** Passed by the pool as workerData: to the builder thread (`buildWordTable`), then to every piscina thread (`shared`). */
export interface ZxcvbnWorkerData {
  /** Add the de, fr and es-es word lists (default false); about doubles the per-call cost. */
  extraLanguages?: boolean;
  /** This thread builds the shared lists, posts them and ends. */
  buildWordTable?: boolean;
  shared?: SharedZxcvbnData;
}

/**
 * A language package's word lists, loaded only when asked for: de, fr and es-es hold ~260k words that every worker
 * thread would otherwise parse and keep (PASSWORD_EXTRA_LANGUAGES is off by default). Their CommonJS builds, which
 * `import` resolves to as well (the packages name no exports).
 */
const require = createRequire(import.meta.url);
interface LanguagePackage {
  dictionary: Record<string, string[]>;
  translations?: OptionsType['translations'];
  adjacencyGraphs?: OptionsType['graphs'];
}
/** Each package named literally, so that tools see the dependency; required on first use. */
const PACKAGES = {
  'language-common': () => require('@zxcvbn-ts/language-common'),
  'language-en': () => require('@zxcvbn-ts/language-en'),
  'language-de': () => require('@zxcvbn-ts/language-de'),
  'language-fr': () => require('@zxcvbn-ts/language-fr'),
  'language-es-es': () => require('@zxcvbn-ts/language-es-es'),
} as const;
const language = (name: keyof typeof PACKAGES): LanguagePackage => PACKAGES[name]() as LanguagePackage;

/** Every word list the service reads, by the library's names. */
function dictionaryOf(extraLanguages: boolean): Record<string, string[]> {
  const extra = extraLanguages
    ? {
        ...extraLists(language('language-de').dictionary, '-de'),
        ...extraLists(language('language-fr').dictionary, '-fr'),
        ...extraLists(language('language-es-es').dictionary, '-es-es'),
      }
    : {};
  return { ...language('language-common').dictionary, ...language('language-en').dictionary, ...extra };
}

/** The options other than the word lists. */
const settings = (translations: OptionsType['translations'], graphs: OptionsType['graphs']): OptionsType => ({
  translations,
  graphs,
  useLevenshteinDistance: false,
  l33tMaxSubstitutions: L33T_MAX_SUBSTITUTIONS,
  // Backstop only: callers already cut to MAX_ANALYSED_CHARS code points (at most 2 UTF-16 units each).
  maxLength: MAX_ANALYSED_CHARS * 2,
});

/**
 * The word lists in one table of SharedArrayBuffers and the options' small parts, built once for every worker thread:
 * each thread reads the table in place instead of parsing the language packages and building its own ranked lists.
 */
export function sharedZxcvbnData(extraLanguages = false): SharedZxcvbnData {
  return {
    table: buildWordTable(dictionaryOf(extraLanguages), (bytes) => new SharedArrayBuffer(bytes)),
    translations: language('language-en').translations!,
    graphs: language('language-common').adjacencyGraphs!,
  };
}

/** The zxcvbn options the service uses, its lists in this thread's memory; exported for the bench and the tests. */
export function zxcvbnOptions(extraLanguages = false): OptionsType {
  return {
    ...settings(language('language-en').translations!, language('language-common').adjacencyGraphs!),
    dictionary: dictionaryOf(extraLanguages),
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

const data = (isMainThread ? undefined : workerData) as ZxcvbnWorkerData | undefined;

function getFactory(): ZxcvbnFactory {
  if (factory) return factory;
  const shared = data?.shared;
  if (shared) {
    factory = createTableZxcvbn(shared.table, settings(shared.translations, shared.graphs));
    longestWord = Math.max(0, ...shared.table.maxWordSize);
  } else {
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

// The builder thread posts the shared lists and ends; a pool thread warms once at start-up, not on the first request.
if (data?.buildWordTable) parentPort?.postMessage(sharedZxcvbnData(data.extraLanguages === true));
else if (!isMainThread) warmUp();

/** Piscina task entry point: the password arrives as an in-memory message. */
export default function task(password: string): Strength {
  return estimateStrength(password);
}
