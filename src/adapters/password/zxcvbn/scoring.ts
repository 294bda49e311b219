// zxcvbn "most guessable match sequence" (Wheeler 2016, USENIX Security): the library's search and results on typed arrays.
import { createRequire } from 'node:module';
import type { Options, ZxcvbnFactory } from '@zxcvbn-ts/core';

/** A match as the matchers produce it (the library's MatchExtended) and as the estimate returns it. */
type Match = { pattern: string; i: number; j: number; token: string; guesses?: number | null } & Record<string, unknown>;
type Estimated = Match & { guesses: number; guessesLog10: number };

/** What the library's mostGuessableMatchSequence returns. */
export interface MatchSequence {
  password: string;
  guesses: number;
  guessesLog10: number;
  sequence: Estimated[];
}

interface ScoringBase {
  password: string;
  excludeAdditive: boolean;
  makeBruteforceMatch(i: number, j: number): Match;
  mostGuessableMatchSequence(password: string, matches: Match[], excludeAdditive?: boolean): MatchSequence;
}

/**
 * Library internals (the package has no exports map; ZxcvbnFactory under Node and tsx is its CommonJS build, so
 * these are the very class and estimate it uses; test/unit/password-scoring.test.ts checks the class).
 */
const load = createRequire(import.meta.url);
const LibraryScoring = load('@zxcvbn-ts/core/dist/scoring/index.cjs') as new (options: Options) => ScoringBase;
const estimateGuesses = load('@zxcvbn-ts/core/dist/scoring/estimate.cjs') as (
  options: Options,
  match: Match,
  password: string,
) => Estimated;
const { factorial, log10 } = load('@zxcvbn-ts/core/dist/scoring/utils.cjs') as {
  factorial(n: number): number;
  log10(n: number): number;
};
const { MIN_GUESSES_BEFORE_GROWING_SEQUENCE, MIN_SUBMATCH_GUESSES_SINGLE_CHAR, MIN_SUBMATCH_GUESSES_MULTI_CHAR } = load(
  '@zxcvbn-ts/core/dist/data/const.cjs',
) as { MIN_GUESSES_BEFORE_GROWING_SEQUENCE: number; MIN_SUBMATCH_GUESSES_SINGLE_CHAR: number; MIN_SUBMATCH_GUESSES_MULTI_CHAR: number };

type PatternScoring = (match: Match, options: Options) => number | { calculation: number };
/** The per-pattern estimates estimateGuesses dispatches to (its own table, by pattern name). */
const PATTERN_SCORING: Readonly<Record<string, PatternScoring>> = Object.fromEntries(
  ['bruteforce', 'date', 'dictionary', 'regex', 'repeat', 'sequence', 'spatial', 'separator', 'wordSequence'].map((name) => [
    name,
    load(`@zxcvbn-ts/core/dist/matcher/${name}/scoring.cjs`) as PatternScoring,
  ]),
);

/**
 * The optimum table for one call. Cell (k, l) = k * stride + l describes the best length-l sequence covering the
 * prefix up to k: `total` its minimised metric, `product` its guess product, `start` the i of its last match
 * (-1: no such entry), `last` that match (null: a bruteforce match i..k, made only if it is returned).
 * `prefixMin` (k, l) is the least comparable total over lengths <= l (NaN: none), which turns the library's skip
 * rule ("skip when an entry with length <= l has total <= g") into one comparison. Only lengths <= top[k] are read.
 */
class Table {
  stride = 0;
  total = new Float64Array(0);
  product = new Float64Array(0);
  prefixMin = new Float64Array(0);
  start = new Int32Array(0);
  last: Array<Match | null> = [];
  top = new Int32Array(0);
  /** Lengths at k whose last match is not bruteforce (the only ones a bruteforce match may extend). */
  extendable = new Int32Array(0);
  extendableCount = new Int32Array(0);

  reset(n: number): void {
    const stride = n + 1;
    const cells = n * stride;
    if (this.total.length < cells) {
      this.total = new Float64Array(cells);
      this.product = new Float64Array(cells);
      this.prefixMin = new Float64Array(cells);
      this.start = new Int32Array(cells);
      this.extendable = new Int32Array(cells);
      this.last = new Array<Match | null>(cells).fill(null);
    }
    if (this.top.length < n) {
      this.top = new Int32Array(n);
      this.extendableCount = new Int32Array(n);
    }
    this.stride = stride;
    this.top.fill(0, 0, n);
  }

  /** Drop the match references so a finished call keeps no password text alive. */
  clear(n: number): void {
    this.last.fill(null, 0, n * this.stride);
  }
}

/** The library's Scoring with the same algorithm, order of updates, tie rules and results, without its overhead. */
export class FastScoring extends (LibraryScoring as new (options: Options) => ScoringBase) {
  readonly #options: Options;
  #spare: Table | undefined = new Table();
  /** factorial(l) and D ** (l - 1), computed exactly as the library computes them. */
  #factorials: number[] = [1, 1];
  #additive: number[] = [0, 1];

  constructor(options: Options) {
    super(options);
    this.#options = options;
  }

  override mostGuessableMatchSequence(password: string, matches: Match[], excludeAdditive = false): MatchSequence {
    this.password = password;
    this.excludeAdditive = excludeAdditive;
    const n = password.length;
    // One table kept for the next call; a call that finds it in use (re-entered) builds its own.
    // this.optimal is left as the constructor set it: only the library's own mostGuessableMatchSequence and
    // getGuesses read it, and this override replaces the former and does not call the latter.
    const table = this.#spare ?? new Table();
    this.#spare = undefined;
    try {
      table.reset(n);
      this.#search(table, password, matches, excludeAdditive);
      const sequence = this.#unwind(table, n);
      const guesses = n === 0 ? 1 : table.total[(n - 1) * table.stride + sequence.length];
      return { password, guesses, guessesLog10: log10(guesses), sequence };
    } finally {
      table.clear(n);
      this.#spare = table;
      // The library keeps the last text here; nothing of a password outlives its estimate.
      this.password = '';
    }
  }

  /**
   * The guesses estimateGuesses gives `match`, without the estimated copy it makes of every match (a spread of all
   * its fields, most of a dense text's scoring cost): the search needs only the number; the matches it returns are
   * estimated by the library in #unwind. Same steps: a match's own guesses, else its pattern's estimate (a dictionary
   * one's calculation) and at least the submatch minimum.
   */
  #guesses(match: Match, password: string): number {
    if (match.guesses != null) return match.guesses;
    const length = match.token.length;
    const least = length < password.length ? (length === 1 ? MIN_SUBMATCH_GUESSES_SINGLE_CHAR : MIN_SUBMATCH_GUESSES_MULTI_CHAR) : 1;
    const custom = (this.#options.matchers as Record<string, { scoring?: PatternScoring }>)[match.pattern];
    const scoring = PATTERN_SCORING[match.pattern] ?? (custom && 'scoring' in custom ? custom.scoring : undefined);
    const result = scoring ? scoring(match, this.#options) : 0;
    const guesses = typeof result === 'number' ? result : match.pattern === 'dictionary' ? result.calculation : 0;
    return Math.max(guesses, least);
  }

  #search(table: Table, password: string, matches: Match[], excludeAdditive: boolean): void {
    const n = password.length;
    this.#grow(n + 1);
    // Matches by end index j, each list sorted by i (stable, as the library sorts).
    const byEnd: Match[][] = Array.from({ length: n }, () => []);
    for (const match of matches) byEnd[match.j].push(match);
    for (const list of byEnd) list.sort((a, b) => a.i - b.i);
    // Bruteforce guesses depend only on the token length (and the password length): one estimate per length.
    const bruteforce = new Float64Array(n + 1);
    for (let length = 1; length <= n; length += 1) {
      bruteforce[length] = estimateGuesses(this.#options, this.makeBruteforceMatch(0, length - 1), password).guesses;
    }
    const { stride, start, product, top, extendable, extendableCount } = table;
    for (let k = 0; k < n; k += 1) {
      for (const match of byEnd[k]) {
        const guesses = this.#guesses(match, password);
        if (match.i > 0) {
          const previous = match.i - 1;
          const base = previous * stride;
          for (let l = 1; l <= top[previous]; l += 1) {
            if (start[base + l] >= 0) this.#update(table, k, l + 1, guesses * product[base + l], match, match.i, excludeAdditive);
          }
        } else {
          this.#update(table, k, 1, guesses, match, 0, excludeAdditive);
        }
      }
      // Bruteforce i..k: the whole prefix as one match, then after every sequence ending at i - 1 in another match.
      this.#update(table, k, 1, bruteforce[k + 1], null, 0, excludeAdditive);
      for (let i = 1; i <= k; i += 1) {
        const guesses = bruteforce[k - i + 1];
        const previous = i - 1;
        const base = previous * stride;
        for (let e = 0; e < extendableCount[previous]; e += 1) {
          const l = extendable[base + e];
          this.#update(table, k, l + 1, guesses * product[base + l], null, i, excludeAdditive);
        }
      }
      let count = 0;
      for (let l = 1; l <= top[k]; l += 1) {
        if (start[k * stride + l] >= 0 && table.last[k * stride + l] !== null) extendable[k * stride + count++] = l;
      }
      extendableCount[k] = count;
    }
  }

  /** The library's update(): keep the candidate unless a sequence as short or shorter fares as well. */
  #update(table: Table, k: number, l: number, pi: number, last: Match | null, i: number, excludeAdditive: boolean): void {
    let g = this.#factorials[l] * pi;
    if (!excludeAdditive) g += this.#additive[l];
    const { stride, total, product, prefixMin, start, top } = table;
    const base = k * stride;
    const height = top[k];
    if (height > 0 && prefixMin[base + (l < height ? l : height)] <= g) return;
    total[base + l] = g;
    product[base + l] = pi;
    start[base + l] = i;
    table.last[base + l] = last;
    if (l > height) {
      const below = height > 0 ? prefixMin[base + height] : Number.NaN;
      for (let gap = height + 1; gap < l; gap += 1) {
        start[base + gap] = -1;
        prefixMin[base + gap] = below;
      }
      top[k] = l;
    }
    // Least comparable total over lengths <= m, for m from l up (NaN totals never skip anything).
    let least = l > 1 ? prefixMin[base + l - 1] : Number.NaN;
    for (let m = l; m <= top[k]; m += 1) {
      const value = start[base + m] >= 0 ? total[base + m] : Number.NaN;
      if (Number.isNaN(least) || value < least) least = value;
      prefixMin[base + m] = least;
    }
  }

  /** The library's unwind(): the least total at the end (shortest on ties), then back through the last matches. */
  #unwind(table: Table, n: number): Estimated[] {
    const sequence: Estimated[] = [];
    if (n === 0) return sequence;
    const { stride, total, start, top } = table;
    let k = n - 1;
    let l = 0;
    let g = Number.POSITIVE_INFINITY;
    for (let m = 1; m <= top[k]; m += 1) {
      if (start[k * stride + m] >= 0 && total[k * stride + m] < g) {
        l = m;
        g = total[k * stride + m];
      }
    }
    while (k >= 0) {
      const i = l > 0 ? start[k * stride + l] : -1;
      if (i < 0) throw new TypeError(`no length-${l} sequence ends at ${k}`); // the library fails here too
      const match = estimateGuesses(this.#options, table.last[k * stride + l] ?? this.makeBruteforceMatch(i, k), this.password);
      sequence.unshift(match);
      k = i - 1;
      l -= 1;
    }
    return sequence;
  }

  #grow(length: number): void {
    for (let l = this.#factorials.length; l <= length; l += 1) {
      this.#factorials.push(factorial(l));
      this.#additive.push(MIN_GUESSES_BEFORE_GROWING_SEQUENCE ** (l - 1));
    }
  }
}

/**
 * Put FastScoring where the library scores: the factory's final pass over all matches and the repeat matcher's
 * own instance (it scores every repeat's base token). Both fields are public at run time, private in the types.
 */
export function useFastScoring<T extends ZxcvbnFactory>(factory: T): T {
  const internals = factory as unknown as {
    options: Options;
    scoring: ScoringBase;
    matching: { matchers: Record<string, { scoring?: ScoringBase }> };
  };
  const repeat = internals.matching.matchers.repeat;
  if (!(repeat?.scoring instanceof LibraryScoring)) throw new Error('@zxcvbn-ts/core: the repeat matcher has no Scoring');
  internals.scoring = new FastScoring(internals.options);
  repeat.scoring = new FastScoring(internals.options);
  return factory;
}
