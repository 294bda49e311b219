// zxcvbn dictionary and reversed-dictionary matchers (Wheeler, "zxcvbn: Low-Budget Password Strength Estimation",
// USENIX Security 2016): the library's matches, without looking up windows that no word list holds.
import { MatcherBaseClass, type Options } from '@zxcvbn-ts/core';
import { WordEnds, WordIndex, wordIndexFor } from './word-index.js';

type MatchOptions = Parameters<MatcherBaseClass['match']>[0];

export interface DictionaryMatch {
  pattern: 'dictionary';
  i: number;
  j: number;
  token: string;
  matchedWord: string;
  rank: number;
  dictionaryName: string;
  reversed: boolean;
  l33t: false;
}

/** A window i..j that some list of the matcher holds: the lower-cased word and its rank in each such list, in order. */
export interface WordHit {
  j: number;
  word: string;
  ranks: Array<{ name: string; rank: number }>;
}

/**
 * The lists a dictionary matcher reads, as the library's dictionary matcher chooses them (every list plus the user
 * inputs, or the word-sequence lists only), and the windows of a text they hold, found through the word index.
 */
export class DictionaryLists {
  readonly index: WordIndex;
  private readonly names: string[];
  /** The positions in `names` of the lists this matcher reads. */
  private readonly read: number[];

  /** The names of the lists read (the user-input list is read only when every list is). */
  readonly readNames: ReadonlySet<string>;

  constructor(
    options: Options,
    readonly wordSequenceOnly: boolean,
  ) {
    this.index = wordIndexFor(options.dictionary, () => options.rankedDictionaries);
    this.names = this.index.table.names;
    this.read = this.names.flatMap((name, b) => (wordSequenceOnly && !options.isWordSequence(name) ? [] : [b]));
    this.readNames = new Set(this.read.map((b) => this.names[b]));
  }

  /** Without user inputs, the same for every call: made once (its buffers are reset by each lookup). */
  private withoutUser: PreparedLists | undefined;

  /** Whether a call with these user inputs reads the lists alone (no user-input list), as prepare() decides. */
  readsListsOnly(userInputsOptions: MatchOptions['userInputsOptions']): boolean {
    return this.wordSequenceOnly || !userInputsOptions || Object.keys(userInputsOptions.rankedDictionary).length === 0;
  }

  /** Per call: the user-input list (when read), the longest word of the lists read. */
  prepare(userInputsOptions: MatchOptions['userInputsOptions']): PreparedLists {
    const sizes = this.index.table.maxWordSize;
    const widest = (): number => Math.max(0, ...this.read.map((b) => sizes[b]));
    if (!userInputsOptions || this.readsListsOnly(userInputsOptions)) {
      return (this.withoutUser ??= new PreparedLists(this, undefined, widest()));
    }
    const user = userInputsOptions.rankedDictionary;
    const userSize = Math.max(userInputsOptions.rankedDictionaryMaxWordSize, 0);
    const index = Object.keys(user).length > 0 ? WordIndex.of({ userInputs: user }) : undefined;
    return new PreparedLists(this, { words: user, index, size: userSize }, Math.max(userSize, widest()));
  }

  /** The ranks of `word` (at sorted position k of the index) in the lists read, in the options' order. */
  ranks(word: string, k: number, isFull: boolean, out: WordHit['ranks']): void {
    const sizes = this.index.table.maxWordSize;
    for (const b of this.read) {
      const rank = this.index.rank(k, b);
      if (rank === 0 || (word.length > sizes[b] && !isFull)) continue;
      out.push({ name: this.names[b], rank });
    }
  }
}

interface UserList {
  words: Record<string, number>;
  index: WordIndex | undefined;
  size: number;
}

export class PreparedLists {
  private readonly found = new WordEnds();
  private readonly userFound = new WordEnds();

  constructor(
    private readonly lists: DictionaryLists,
    private readonly user: UserList | undefined,
    /** The longest word of the lists read: the library reads no longer window but the whole text. */
    readonly widest: number,
  ) {}

  /** After hitsAt: the last j such that some word of the lists begins with the window i..j (i - 1 when none). */
  get reach(): number {
    return Math.max(this.found.reach, this.user?.index ? this.userFound.reach : -1);
  }

  /**
   * The windows i..j (minEnd <= j <= maxEnd, ascending) of `lower` that a list read holds, as the library's loop
   * finds them: `n` is the length of the text before lower-casing (its whole is looked up in every list).
   */
  hitsAt(lower: string, n: number, i: number, minEnd: number, maxEnd: number): WordHit[] {
    const { found, userFound } = this;
    this.lists.index.wordsAt(lower, i, minEnd, maxEnd, found);
    userFound.count = 0;
    userFound.reach = -1;
    this.user?.index?.wordsAt(lower, i, minEnd, maxEnd, userFound);
    if (found.count === 0 && userFound.count === 0) return NONE;
    const hits: WordHit[] = [];
    let a = 0;
    let b = 0;
    while (a < found.count || b < userFound.count) {
      const j = b >= userFound.count || (a < found.count && found.ends[a] <= userFound.ends[b]) ? found.ends[a] : userFound.ends[b];
      const word = lower.slice(i, j + 1);
      const isFull = i === 0 && j === n - 1;
      const ranks: WordHit['ranks'] = [];
      if (a < found.count && found.ends[a] === j) this.lists.ranks(word, found.positions[a++], isFull, ranks);
      if (b < userFound.count && userFound.ends[b] === j) {
        b += 1;
        if (this.user && (word.length <= this.user.size || isFull)) ranks.push({ name: 'userInputs', rank: this.user.words[word] });
      }
      if (ranks.length > 0) hits.push({ j, word, ranks });
    }
    return hits;
  }
}

const NONE: WordHit[] = [];

/**
 * Last end the library's dictionary loop reaches from i: windows up to the longest word, and the whole text from 0
 * when it is at most one character longer (the library still reads it then: it stops at the first window longer
 * than the longest word that is not the whole text).
 */
export const lastEnd = (i: number, n: number, widest: number): number =>
  i === 0 && n - 1 === widest ? n - 1 : Math.min(n - 1, i + widest - 1);

/** A matcher over the dictionary lists through their word index; Levenshtein matching is not supported. */
export abstract class ListMatcher extends MatcherBaseClass {
  /**
   * The lists read, and the sorted index of their words (src/adapters/password/zxcvbn/word-index.ts): only windows that are
   * words are looked up, and a window no word begins with costs no string (V8 copies a sliced string to hash it).
   */
  protected readonly lists: DictionaryLists;

  /** wordSequenceOnly: look in the word-sequence lists only (numbers, months...), as the word-sequence matcher does. */
  constructor(options: Options, wordSequenceOnly = false) {
    super(options);
    if (options.useLevenshteinDistance) throw new Error(`${new.target.name} supports useLevenshteinDistance: false only`);
    this.lists = new DictionaryLists(options, wordSequenceOnly);
  }
}

const ASCII = /^[\x00-\x7f]*$/;

/** Matchers holding their last text's matches (forgetDictionaryMatches empties them). */
const holding = new Set<WordFilteredDictionaryMatcher>();

/** Drop every remembered text and its matches: nothing of a password outlives its estimate. */
export function forgetDictionaryMatches(): void {
  for (const matcher of holding) matcher.forget();
  holding.clear();
}

/** Whether a dictionary matcher holds a text's matches now (tests: none once an estimate is over). */
export function dictionaryMatchesHeld(): boolean {
  return holding.size > 0;
}

/**
 * Same matches, in the same order, as the library's dictionary matcher with Levenshtein off. The library looks
 * every window of up to the longest word's length up in every list (20 hash lookups of a sliced string each for
 * common + en); here the sorted word index finds the windows that are words and only those are looked up in the
 * lists.
 *
 * A text that begins the last one matched (the estimate of a long password's part before its cut, after the spans
 * around the cut were looked for in a longer piece) gets that text's matches which end within it: a word is found
 * wherever it stands, so those are its matches, in the same order (test/unit/password-l33t.test.ts).
 */
export class WordFilteredDictionaryMatcher extends ListMatcher {
  #last: { text: string; matches: DictionaryMatch[] } | undefined;

  match({ password, userInputsOptions }: MatchOptions): DictionaryMatch[] {
    if (!this.lists.readsListsOnly(userInputsOptions)) return this.find(password, userInputsOptions);
    const last = this.#last;
    if (last !== undefined && last.text.startsWith(password)) {
      return password.length === last.text.length ? last.matches.slice() : last.matches.filter((m) => m.j < password.length);
    }
    const matches = this.find(password, userInputsOptions);
    // ASCII only: elsewhere lower-casing can depend on what follows (a final sigma) or change the length.
    if (ASCII.test(password)) {
      this.#last = { text: password, matches: matches.slice() };
      holding.add(this);
    }
    return matches;
  }

  forget(): void {
    this.#last = undefined;
  }

  /** Every match in `password`, found afresh. */
  protected find(password: string, userInputsOptions: MatchOptions['userInputsOptions']): DictionaryMatch[] {
    const lists = this.lists.prepare(userInputsOptions);
    const n = password.length;
    const lower = password.toLowerCase();
    const matches: DictionaryMatch[] = [];
    for (let i = 0; i < n; i += 1) {
      for (const { j, word, ranks } of lists.hitsAt(lower, n, i, i, lastEnd(i, n, lists.widest))) {
        const token = password.slice(i, j + 1);
        for (const { name, rank } of ranks) {
          matches.push({ pattern: 'dictionary', i, j, token, matchedWord: word, rank, dictionaryName: name, reversed: false, l33t: false });
        }
      }
    }
    return matches;
  }
}

/** The library's reversed-dictionary matcher ("drowssap") on the word-filtered dictionary matcher. */
export class WordFilteredReverseMatcher extends WordFilteredDictionaryMatcher {
  protected override find(password: string, userInputsOptions: MatchOptions['userInputsOptions']): DictionaryMatch[] {
    const reversed = password.split('').reverse().join('');
    return super.find(reversed, userInputsOptions).map((m) => ({
      ...m,
      token: m.token.split('').reverse().join(''),
      reversed: true,
      i: password.length - 1 - m.j,
      j: password.length - 1 - m.i,
    }));
  }
}
