// zxcvbn l33t matcher (Wheeler, "zxcvbn: Low-Budget Password Strength Estimation", USENIX Security 2016):
// the library's own matches, found without re-scanning what consecutive substitution variants share.
import { createRequire } from 'node:module';
import { MatcherBaseClass, type Matcher, type Options } from '@zxcvbn-ts/core';
import { ListMatcher, WordFilteredDictionaryMatcher, WordFilteredReverseMatcher, lastEnd, type DictionaryMatch, type WordHit } from './dictionary.js';
import { substitutedReadings, type Change, type Variant } from './readings.js';

type MatchOptions = Parameters<MatcherBaseClass['match']>[0];

/** A dictionary match found in a substituted reading (the library's l33t match). */
export interface L33tMatch extends Omit<DictionaryMatch, 'reversed' | 'l33t'> {
  reversed: false;
  l33t: true;
  subs: Array<{ letter: string; substitution: string }>;
  subDisplay: string;
}

/** Library internals this module builds on (the package has no exports map, these are its CommonJS build). */
const load = createRequire(import.meta.url);

/** The last password's variants: the l33t matcher and the word-sequence matcher's own l33t pass read the same ones. */
let lastVariants: { password: string; limit: number; trie: unknown; variants: Variant[] } | undefined;

function getCleanPasswords(password: string, limit: number, trie: Options['trieNodeRoot']): Variant[] {
  if (lastVariants?.password !== password || lastVariants.limit !== limit || lastVariants.trie !== trie) {
    lastVariants = { password, limit, trie, variants: substitutedReadings(password, limit, trie) };
  }
  return lastVariants.variants;
}

/**
 * The last l33t matches over every list, per options, number of readings and password: the word-sequence matcher's
 * own l33t pass reads the same readings in the word-sequence lists only, so its matches are these, from those lists,
 * in the same order (its windows are a subset, its hits per window the same). Not when a reading matched the whole
 * password: the pass over every list may stop at a reading before the word-sequence pass would. A few passwords are
 * kept, since the repeat matcher matches each repeated unit in between. Keyed by readings too: the quick passes
 * around a cut (1 reading) pair up the same way as the estimate's (the library's 100).
 */
let lastMatches = new WeakMap<Options, Map<string, { matches: L33tMatch[]; stoppedEarly: boolean }>>();
const KEPT_PASSWORDS = 8;
/** Passwords remembered since the last forget (a WeakMap cannot be counted). */
let remembered = 0;

const memoryKey = (readings: number, password: string): string => `${readings}\u0000${password}`;

function remember(options: Options, key: string, matches: L33tMatch[], stoppedEarly: boolean): void {
  let byPassword = lastMatches.get(options);
  if (!byPassword) lastMatches.set(options, (byPassword = new Map()));
  if (byPassword.size >= KEPT_PASSWORDS) byPassword.delete(byPassword.keys().next().value as string);
  byPassword.set(key, { matches, stoppedEarly });
  remembered += 1;
}

/** Drop the readings and matches of the password just analysed: nothing of a password outlives its estimate. */
export function forgetL33tReadings(): void {
  lastVariants = undefined;
  lastMatches = new WeakMap();
  remembered = 0;
}

/** Whether readings or l33t matches of a password are held now (tests: none once an estimate is over). */
export function l33tReadingsHeld(): boolean {
  return lastVariants !== undefined || remembered > 0;
}

/** Where the window i..j of a variant lies in the original password, and which changes it holds. */
function extras(variant: Variant, i: number, j: number): Pick<L33tMatch, 'i' | 'j' | 'subs' | 'subDisplay'> {
  let from = i;
  let to = j;
  const subs: L33tMatch['subs'] = [];
  const display: string[] = [];
  const seen = new Set<string>();
  for (const change of variant.changes) {
    const diff = change.substitution.length - change.letter.length;
    if (change.i < i) {
      from += diff;
      to += diff;
    } else if (change.i <= j) {
      to += diff;
      const key = `${change.letter}-${change.substitution}`;
      if (!seen.has(key)) {
        seen.add(key);
        subs.push({ letter: change.letter, substitution: change.substitution });
        display.push(`${change.substitution} -> ${change.letter}`);
      }
    }
  }
  return { i: from, j: to, subs, subDisplay: display.join(', ') };
}

const sameChange = (a: Change, b: Change): boolean =>
  a.i === b.i && a.letter === b.letter && a.substitution === b.substitution;

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a.charCodeAt(k) === b.charCodeAt(k)) k += 1;
  return k;
}

/**
 * Windows ending before this index read the same in `variant` as in `previous`: the same substituted text,
 * lower-cased text and changes, hence the same matches (already kept or already refused).
 */
function sharedUntil(previous: Variant, previousLower: string, variant: Variant, lower: string): number {
  let shared = Math.min(commonPrefix(previous.password, variant.password), commonPrefix(previousLower, lower));
  const n = Math.min(previous.changes.length, variant.changes.length);
  let k = 0;
  while (k < n && sameChange(previous.changes[k], variant.changes[k])) k += 1;
  if (k < previous.changes.length) shared = Math.min(shared, previous.changes[k].i);
  if (k < variant.changes.length) shared = Math.min(shared, variant.changes[k].i);
  // The window that ends the variant is always read: it alone can match the whole password.
  return Math.min(shared, variant.password.length - 1);
}

/** Packs a window's lowest end read and its reach into one number (both below this; the text is at most 256 units). */
const READ_STRIDE = 1 << 16;

/**
 * The matches of one window's hits that contain an actual substitution, each (position, dictionary, word) once;
 * true when one of them spans the whole password.
 */
function keepHits(hits: readonly WordHit[], variant: Variant, i: number, password: string, kept: Set<string>, matches: L33tMatch[]): boolean {
  let full = false;
  for (const { j, word, ranks } of hits) {
    const at = extras(variant, i, j);
    if (at.i === 0 && at.j === password.length - 1) full = true;
    const token = password.slice(at.i, at.j + 1);
    // Only matches that contain an actual substitution.
    if (token.toLowerCase() === word) continue;
    for (const { name, rank } of ranks) {
      // Each (position, dictionary, word) once.
      const key = `${at.i}\u0000${at.j}\u0000${name}\u0000${word}`;
      if (kept.has(key)) continue;
      kept.add(key);
      matches.push({
        pattern: 'dictionary',
        i: at.i,
        j: at.j,
        token,
        matchedWord: word,
        rank,
        dictionaryName: name,
        reversed: false,
        l33t: true,
        subs: at.subs,
        subDisplay: at.subDisplay,
      });
    }
  }
  return full;
}

/**
 * Same matches, in the same order, as the library's l33t matcher with Levenshtein off: every substituted
 * variant is looked up in every dictionary, but a window a variant shares with the one before it (the variants
 * come depth-first, so most share all but their tail) is not looked up again, since its match was already
 * kept or refused. With the library's default of 100 variants this avoids re-scanning ~100 copies of the
 * password.
 */
export class SharedPrefixL33tMatcher extends ListMatcher {
  /** Substituted readings read: the options' (the library's), unless fewer are asked for a quick look. */
  private readonly readings: number;

  constructor(options: Options, wordSequenceOnly = false, readings = options.l33tMaxSubstitutions) {
    super(options, wordSequenceOnly);
    this.readings = readings;
  }

  match({ password, userInputsOptions }: MatchOptions): L33tMatch[] {
    const options = this.options;
    const key = memoryKey(this.readings, password);
    if (this.lists.wordSequenceOnly) {
      const known = lastMatches.get(options)?.get(key);
      if (known && !known.stoppedEarly) return known.matches.filter((m) => this.lists.readNames.has(m.dictionaryName));
    }
    const lists = this.lists.prepare(userInputsOptions);
    const widest = lists.widest;
    const matches: L33tMatch[] = [];
    const kept = new Set<string>();
    let hasFullMatch = false;
    let previous: Variant | undefined;
    let previousLower = '';
    /** reach[i]: the last j such that some word begins with i..j in the latest variant read from i. */
    let reach = new Int32Array(password.length);
    /**
     * Windows already read from i, by their text (readings of single-character substitutions only, which keep every
     * index where it is in the password): the lowest end then read, and the reach. The readings come depth-first
     * and differ in their last substitutions, so the same windows recur; their matches are already kept or refused.
     */
    const read: Array<Map<string, number> | undefined> = [];

    for (const variant of getCleanPasswords(password, this.readings, options.trieNodeRoot)) {
      if (hasFullMatch) break;
      const lower = variant.password.toLowerCase();
      const n = variant.password.length;
      const from = previous ? sharedUntil(previous, previousLower, variant, lower) : 0;
      previous = variant;
      previousLower = lower;
      let aligned = n === password.length;
      for (let c = 0; aligned && c < variant.changes.length; c += 1) {
        aligned = variant.changes[c].substitution.length === 1 && variant.changes[c].letter.length === 1;
      }
      if (reach.length < n) {
        const longer = new Int32Array(n);
        longer.set(reach);
        reach = longer;
      }
      // Windows that end before `from` were read in the previous variant; none is longer than the library reads.
      for (let i = Math.max(0, from - widest); i < n; i += 1) {
        const last = lastEnd(i, n, widest);
        if (last < Math.max(i, from)) continue;
        // Text before `from` is the previous variant's: when no word began with i..from-1 there, none does here.
        if (i < from && reach[i] < from - 1) continue;
        const minEnd = Math.max(i, from);
        // Packed as minEnd * READ_STRIDE + reach + 1 (indices stay far below 2^16: the options cut at 256 units).
        const window = aligned ? lower.slice(i, last + 1) : undefined;
        const seen = window === undefined ? undefined : read[i]?.get(window);
        if (seen !== undefined && Math.floor(seen / READ_STRIDE) <= minEnd) {
          reach[i] = (seen % READ_STRIDE) - 1;
          continue;
        }
        const hits = lists.hitsAt(lower, n, i, minEnd, last);
        reach[i] = lists.reach;
        if (window !== undefined) (read[i] ??= new Map()).set(window, minEnd * READ_STRIDE + lists.reach + 1);
        if (keepHits(hits, variant, i, password, kept, matches)) hasFullMatch = true;
      }
    }
    // As the library: single-character l33t matches ('4' read as 'a') are noise.
    const found = matches.filter((m) => m.token.length > 1);
    if (!this.lists.wordSequenceOnly) remember(options, key, found, hasFullMatch);
    return found;
  }
}

const wordSequence = {
  Matching: load('@zxcvbn-ts/core/dist/matcher/wordSequence/matching.cjs') as new (options: Options) => {
    dictionary: MatcherBaseClass;
    dictionaryL33t: MatcherBaseClass;
    dictionaryReverse: MatcherBaseClass;
    match: MatcherBaseClass['match'];
  },
  feedback: load('@zxcvbn-ts/core/dist/matcher/wordSequence/feedback.cjs') as Matcher['feedback'],
  scoring: load('@zxcvbn-ts/core/dist/matcher/wordSequence/scoring.cjs') as Matcher['scoring'],
};

/** The library's word-sequence matcher ("oneTwoThree"), whose own dictionary passes get the faster matchers too. */
class WordSequenceMatcher extends wordSequence.Matching {
  /** readings: of the l33t pass, the options' (the library's) unless fewer are asked for a quick look. */
  constructor(options: Options, readings = options.l33tMaxSubstitutions) {
    super(options);
    this.dictionary = new WordFilteredDictionaryMatcher(options, true);
    this.dictionaryL33t = new SharedPrefixL33tMatcher(options, true, readings);
    this.dictionaryReverse = new WordFilteredReverseMatcher(options, true);
  }
}

/** A word-sequence matcher whose l33t pass reads the first `readings` readings only (spans around a cut). */
export function quickWordSequenceMatcher(options: Options, readings: number): { match: MatcherBaseClass['match'] } {
  return new WordSequenceMatcher(options, readings);
}

/** The library's feedback for dictionary matches: a matcher registered as "dictionary" replaces it unless given. */
const dictionaryFeedback = load('@zxcvbn-ts/core/dist/matcher/dictionary/feedback.cjs') as Matcher['feedback'];

const unused = (): never => {
  throw new Error('the l33t matcher reports dictionary matches: the built-in dictionary scoring and feedback apply');
};

/**
 * Pass as `new ZxcvbnFactory(options, sharedPrefixMatchers)`: a custom matcher under a built-in's name replaces
 * it. The dictionary, reversed-dictionary and l33t matchers find the library's matches through the word index
 * (src/adapters/password/zxcvbn/dictionary.ts); their matches have pattern 'dictionary', so the library's dictionary scoring
 * applies, and its dictionary feedback is passed on; the word-sequence matcher keeps the library's scoring and
 * feedback.
 */
export const sharedPrefixMatchers: Record<string, Matcher> = {
  dictionary: { Matching: WordFilteredDictionaryMatcher, scoring: unused, feedback: dictionaryFeedback },
  dictionaryReverse: { Matching: WordFilteredReverseMatcher, scoring: unused, feedback: unused },
  dictionaryL33t: { Matching: SharedPrefixL33tMatcher, scoring: unused, feedback: unused },
  wordSequence: { Matching: WordSequenceMatcher as unknown as Matcher["Matching"], scoring: wordSequence.scoring, feedback: wordSequence.feedback },
};
