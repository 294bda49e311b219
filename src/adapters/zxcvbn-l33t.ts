// zxcvbn l33t matcher (Wheeler, "zxcvbn: Low-Budget Password Strength Estimation", USENIX Security 2016):
// the library's own matches, found without re-scanning what consecutive substitution variants share.
import { createRequire } from 'node:module';
import { MatcherBaseClass, type Matcher, type Options } from '@zxcvbn-ts/core';

/** One l33t change: `substitution` in the password read as `letter`, at index `i` of the substituted text. */
interface Change {
  i: number;
  letter: string;
  substitution: string;
}

interface Variant {
  password: string;
  changes: Change[];
  isFullSubstitution: boolean;
}

type MatchOptions = Parameters<MatcherBaseClass['match']>[0];

export interface L33tMatch {
  pattern: 'dictionary';
  i: number;
  j: number;
  token: string;
  matchedWord: string;
  rank: number;
  dictionaryName: string;
  reversed: false;
  l33t: true;
  subs: Array<{ letter: string; substitution: string }>;
  subDisplay: string;
}

/** Library internals this module builds on (the package has no exports map, these are its CommonJS build). */
const load = createRequire(import.meta.url);

/**
 * The library's variant generator (the substituted readings of a password, in its order, at most `limit`).
 * @zxcvbn-ts/core has no exports map and does not re-export it; test/unit/password.test.ts compares whole
 * results with the library's own l33t matcher, so a layout change in a new version fails there.
 */
const getCleanPasswords = load(
  '@zxcvbn-ts/core/dist/matcher/dictionary/variants/matching/unmunger/getCleanPasswords.cjs',
) as (password: string, limit: number, trieRoot: Options['trieNodeRoot']) => Variant[];

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
function sharedUntil(previous: Variant & { lower: string }, variant: Variant, lower: string): number {
  let shared = Math.min(commonPrefix(previous.password, variant.password), commonPrefix(previous.lower, lower));
  const n = Math.min(previous.changes.length, variant.changes.length);
  let k = 0;
  while (k < n && sameChange(previous.changes[k], variant.changes[k])) k += 1;
  if (k < previous.changes.length) shared = Math.min(shared, previous.changes[k].i);
  if (k < variant.changes.length) shared = Math.min(shared, variant.changes[k].i);
  // The window that ends the variant is always read: it alone can match the whole password.
  return Math.min(shared, variant.password.length - 1);
}

/** Windows this long or longer are looked up only when some word starts with their first characters. */
const PREFIX_LENGTH = 4;

/** The first PREFIX_LENGTH characters of every word of the lists, added to `into`. */
function addWordStarts(into: Set<string>, lists: Iterable<Record<string, number>>): Set<string> {
  for (const list of lists) for (const word in list) if (word.length >= PREFIX_LENGTH) into.add(word.slice(0, PREFIX_LENGTH));
  return into;
}

/**
 * Same matches, in the same order, as the library's l33t matcher with Levenshtein off: every substituted
 * variant is looked up in every dictionary, but a window a variant shares with the one before it (the variants
 * come depth-first, so most share all but their tail) is not looked up again, since its match was already
 * kept or refused. With the library's default of 100 variants this avoids re-scanning ~100 copies of the
 * password (bench/zxcvbn-timing.ts).
 */
export class SharedPrefixL33tMatcher extends MatcherBaseClass {
  /** wordSequenceOnly: look in the word-sequence lists only (numbers, months...), as the word-sequence matcher does. */
  constructor(
    options: Options,
    private readonly wordSequenceOnly = false,
  ) {
    super(options);
    if (options.useLevenshteinDistance) throw new Error('SharedPrefixL33tMatcher supports useLevenshteinDistance: false only');
    this.starts = addWordStarts(new Set(), Object.values(this.dictionaries(undefined).dictionaries));
  }

  /**
   * How every word of the lists begins (~30k strings for common + en, built once). Looking up a long window costs
   * ~0.5 us per list (V8 copies a sliced string to hash it), and most long windows of a substituted variant begin
   * in a way no word does: those are not looked up.
   */
  private readonly starts: Set<string>;

  /** The lists to look in and their longest words, as the library's dictionary matcher chooses them. */
  private dictionaries(userInputsOptions: MatchOptions['userInputsOptions']): {
    dictionaries: Record<string, Record<string, number>>;
    sizes: Record<string, number>;
  } {
    const options = this.options;
    if (this.wordSequenceOnly) {
      const names = Object.keys(options.rankedDictionaries).filter((name) => options.isWordSequence(name));
      return {
        dictionaries: Object.fromEntries(names.map((name) => [name, options.rankedDictionaries[name]])),
        sizes: Object.fromEntries(names.map((name) => [name, options.rankedDictionariesMaxWordSize[name]])),
      };
    }
    const dictionaries: Record<string, Record<string, number>> = { ...options.rankedDictionaries };
    const sizes: Record<string, number> = { ...options.rankedDictionariesMaxWordSize };
    if (userInputsOptions) {
      dictionaries.userInputs = { ...(dictionaries.userInputs ?? {}), ...userInputsOptions.rankedDictionary };
      sizes.userInputs = Math.max(userInputsOptions.rankedDictionaryMaxWordSize, sizes.userInputs || 0);
    }
    return { dictionaries, sizes };
  }

  match({ password, userInputsOptions }: MatchOptions): L33tMatch[] {
    const options = this.options;
    const { dictionaries, sizes } = this.dictionaries(userInputsOptions);
    const names = Object.keys(dictionaries);
    const extra = userInputsOptions ? addWordStarts(new Set(), [userInputsOptions.rankedDictionary]) : undefined;
    const anyWordStarts = (text: string): boolean => this.starts.has(text) || extra?.has(text) === true;
    const widest = Math.max(0, ...Object.values(sizes));
    const matches: L33tMatch[] = [];
    const kept = new Set<string>();
    let hasFullMatch = false;
    let previous: (Variant & { lower: string }) | undefined;

    for (const variant of getCleanPasswords(password, options.l33tMaxSubstitutions, options.trieNodeRoot)) {
      if (hasFullMatch) break;
      const lower = variant.password.toLowerCase();
      const n = variant.password.length;
      const from = previous ? sharedUntil(previous, variant, lower) : 0;
      previous = { ...variant, lower };
      for (let i = 0; i < n; i += 1) {
        // When no word begins with the PREFIX_LENGTH characters at i, no window that long or longer from i is a word.
        const longest = n - i < PREFIX_LENGTH || anyWordStarts(lower.slice(i, i + PREFIX_LENGTH)) ? n : PREFIX_LENGTH - 1;
        for (let j = Math.max(i, from); j < n; j += 1) {
          const isFull = i === 0 && j === n - 1;
          if ((j - i + 1 > widest && !isFull) || j - i + 1 > longest) break;
          const word = lower.slice(i, j + 1);
          for (const name of names) {
            if (j - i + 1 > sizes[name] && !isFull) continue;
            const rank = dictionaries[name][word];
            if (rank === undefined) continue;
            const at = extras(variant, i, j);
            if (!hasFullMatch) hasFullMatch = at.i === 0 && at.j === password.length - 1;
            const token = password.slice(at.i, at.j + 1);
            const key = `${at.i}\u0000${at.j}\u0000${name}\u0000${word}`;
            // Only matches that contain an actual substitution, each (position, dictionary, word) once.
            if (token.toLowerCase() === word || kept.has(key)) continue;
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
      }
    }
    // As the library: single-character l33t matches ('4' read as 'a') are noise.
    return matches.filter((m) => m.token.length > 1);
  }
}

const wordSequence = {
  Matching: load('@zxcvbn-ts/core/dist/matcher/wordSequence/matching.cjs') as new (options: Options) => {
    dictionaryL33t: MatcherBaseClass;
    match: MatcherBaseClass['match'];
  },
  feedback: load('@zxcvbn-ts/core/dist/matcher/wordSequence/feedback.cjs') as Matcher['feedback'],
  scoring: load('@zxcvbn-ts/core/dist/matcher/wordSequence/scoring.cjs') as Matcher['scoring'],
};

/** The library's word-sequence matcher ("oneTwoThree"), whose own l33t pass gets the shared-prefix matcher too. */
class WordSequenceMatcher extends wordSequence.Matching {
  constructor(options: Options) {
    super(options);
    this.dictionaryL33t = new SharedPrefixL33tMatcher(options, true);
  }
}

const unused = (): never => {
  throw new Error('the l33t matcher reports dictionary matches: the built-in dictionary scoring and feedback apply');
};

/**
 * Pass as `new ZxcvbnFactory(options, sharedPrefixMatchers)`: a custom matcher under a built-in's name replaces
 * it. l33t matches have pattern 'dictionary', so the library's dictionary scoring and feedback apply to them;
 * the word-sequence matcher keeps the library's scoring and feedback.
 */
export const sharedPrefixMatchers: Record<string, Matcher> = {
  dictionaryL33t: { Matching: SharedPrefixL33tMatcher, scoring: unused, feedback: unused },
  wordSequence: { Matching: WordSequenceMatcher as unknown as Matcher["Matching"], scoring: wordSequence.scoring, feedback: wordSequence.feedback },
};
