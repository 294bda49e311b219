// Password strength result pieces: SHA-1 k-anonymity split (Pwned Passwords range API) and breach merge.
import { createHash } from 'node:crypto';
import type { components } from '../../generated/api.js';

/** zxcvbn analyses at most this many characters (Unicode code points) of a password; the rest is ignored. */
export const MAX_ANALYSED_CHARS = 128;

/** What the strength estimator (zxcvbn, offline fast-hashing scenario: 1e10 guesses/s) reports. */
export interface Strength {
  /** 0 (weakest) to 4 (strongest). */
  score: number;
  guesses: number;
  /** Seconds to crack in an offline unthrottled attack (1e10 guesses/s). */
  crackTimeSeconds: number;
  crackTimeDisplay: string;
  /** "" when there is no warning. */
  warning: string;
  suggestions: string[];
}

/** The contract's PasswordStrengthResult (openapi.yaml is the source of truth). */
export type PasswordResult = components['schemas']['PasswordStrengthResult'];

/** Highest score a password found in breaches may get ("weak"). */
const BREACHED_MAX_SCORE = 1;

/**
 * The first MAX_ANALYSED_CHARS code points of the password (never splits a surrogate pair).
 * Stops scanning as soon as the limit is reached, so a long input costs only the prefix.
 */
export function truncateForAnalysis(password: string, max = MAX_ANALYSED_CHARS): string {
  if (password.length <= max) return password;
  let units = 0;
  let points = 0;
  while (units < password.length && points < max) {
    const code = password.charCodeAt(units);
    const isPair =
      code >= 0xd800 && code <= 0xdbff && units + 1 < password.length && isLowSurrogate(password.charCodeAt(units + 1));
    units += isPair ? 2 : 1;
    points += 1;
  }
  return password.slice(0, units);
}

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** Longest repeated unit collapseRepeats looks for, in UTF-16 units: a run needs 3 units to be shortened. */
const MAX_REPEAT_UNIT = Math.floor(MAX_ANALYSED_CHARS / 3);

/** How many times the `len` units at `at` repeat back to back from `at`. */
function repeatsAt(text: string, at: number, len: number): number {
  const unit = text.slice(at, at + len);
  let count = 1;
  while (at + (count + 1) * len <= text.length && text.startsWith(unit, at + count * len)) count += 1;
  return count;
}

/**
 * Shortens every run of one repeated unit ("0101...", "aaaa...", "abc!abc!...") to the fewest whole units (at
 * least 2) that still hold every substring of the run up to `longestWord` characters long, so every dictionary
 * word the run holds stays in it, as does what precedes and follows it.
 * zxcvbn scores a run as one repeat match whose guesses grow with the repeat count, so the shorter run needs
 * fewer guesses: the score can only go down (test/unit/password.test.ts compares with the library on the whole
 * text). It bounds the cost of crafted repetitive input, whose overlapping matches cost the estimator many times
 * a typical password (docs/adr/0016-honest-password-scores.md).
 */
export function collapseRepeats(text: string, longestWord: number): string {
  let out = '';
  let at = 0;
  while (at < text.length) {
    let len = 1;
    let collapsed = false;
    for (; len <= MAX_REPEAT_UNIT && at + 2 * len <= text.length; len += 1) {
      if (text.charCodeAt(at) !== text.charCodeAt(at + len)) continue;
      const keep = Math.max(2, Math.ceil((longestWord + len - 1) / len));
      const count = repeatsAt(text, at, len);
      if (count <= keep) continue;
      out += text.slice(at, at + keep * len);
      at += count * len;
      collapsed = true;
      break;
    }
    if (!collapsed) {
      out += text[at];
      at += 1;
    }
  }
  return out;
}

/**
 * Code points of an analysed text that zxcvbn estimates. Matching reads up to 100 substituted readings and grows
 * with the text's length, so a bound on the length is what bounds a crafted password's cost per request
 * (docs/adr/0016-honest-password-scores.md).
 */
export const ESTIMATED_CHARS = 32;

/** A match found around a cut: its first and last UTF-16 index. */
export interface Span {
  i: number;
  j: number;
}

/**
 * Where to cut an analysed text longer than ESTIMATED_CHARS: the highest index from `lowest` to `highest` (UTF-16
 * indices; `lowest` is a longest word before `highest`) that splits none of `spans`, the words, word sequences,
 * repeats and dates found around the cut, nor a surrogate pair, or leaves one character of one before it.
 * A cut through a word prices its first part as random characters and could raise the score above the whole text's;
 * one character costs zxcvbn its minimum of 10 guesses, no more than any match (at least 50 for two characters or
 * more). A cut at a match's edge only leaves text out, which lowers the score. When every index splits a match
 * further, the one that leaves the shortest first part of one (the highest on a tie).
 */
export function chooseCut(text: string, lowest: number, highest: number, spans: readonly Span[]): number {
  // earliest[q - lowest]: the first index of the earliest-starting span that q splits (s.i < q <= s.j); q when none.
  // One pass over the spans (a dense text has hundreds) instead of one per index.
  const earliest = new Int32Array(Math.max(0, highest - lowest + 1));
  for (let q = lowest; q <= highest; q += 1) earliest[q - lowest] = q;
  for (const s of spans) {
    for (let q = Math.max(lowest, s.i + 1), last = Math.min(highest, s.j); q <= last; q += 1) {
      if (s.i < earliest[q - lowest]) earliest[q - lowest] = s.i;
    }
  }
  let best = highest;
  let bestSplit = Infinity;
  for (let q = highest; q >= lowest && bestSplit > 1; q -= 1) {
    if (q > 0 && q < text.length && isLowSurrogate(text.charCodeAt(q)) && isHighSurrogate(text.charCodeAt(q - 1))) continue;
    const split = q - earliest[q - lowest];
    if (split < bestSplit) {
      best = q;
      bestSplit = split;
    }
  }
  return best;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/**
 * Spans of the runs of one unit repeated back to back ("abab", "xxx"), found as zxcvbn's repeat matcher finds them
 * (its greedy and its lazy pattern, each run after the last), without the base-token estimate that matcher adds.
 */
export function repeatSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const pattern of [/(.+)\1+/g, /(.+?)\1+/g]) {
    for (let found = pattern.exec(text); found; found = pattern.exec(text)) {
      spans.push({ i: found.index, j: found.index + found[0].length - 1 });
    }
  }
  return spans;
}

/** Unicode code points in `text` (a surrogate pair counts once). */
export function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) i += 1;
    n += 1;
  }
  return n;
}

/**
 * SHA-1 of the password's UTF-8 bytes as upper-case hex, split for the range API:
 * only `prefix` (5 chars) may leave the service; `suffix` (35 chars) is matched locally.
 */
export function sha1Parts(password: string): { prefix: string; suffix: string } {
  const hex = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
  return { prefix: hex.slice(0, 5), suffix: hex.slice(5) };
}

/** Times the suffix appears in a range answer; 0 when absent (padding rows are dropped upstream). */
export function breachCountFor(range: ReadonlyMap<string, number>, suffix: string): number {
  const count = range.get(suffix.toUpperCase());
  return typeof count === 'number' && Number.isFinite(count) && count > 0 ? Math.floor(count) : 0;
}

/** Warning text for a breached password. */
function breachWarning(count: number): string {
  return count === 1
    ? 'This password has appeared in a data breach once and should never be used.'
    : `This password has appeared in data breaches ${count} times and should never be used.`;
}

const BREACH_SUGGESTION = 'Choose a password that has not appeared in a data breach.';

/**
 * Combine the strength estimate with the breach count. A breached password scores at most 1,
 * its warning says it appeared in breaches and a suggestion to pick another is added first.
 */
export function mergeBreach(strength: Strength, breachCount: number): PasswordResult {
  const count = Number.isFinite(breachCount) && breachCount > 0 ? Math.floor(breachCount) : 0;
  const breached = count > 0;
  const suggestions = strength.suggestions.slice();
  if (breached && !suggestions.includes(BREACH_SUGGESTION)) suggestions.unshift(BREACH_SUGGESTION);
  return {
    score: breached ? Math.min(strength.score, BREACHED_MAX_SCORE) : strength.score,
    crackTimeDisplay: strength.crackTimeDisplay,
    crackTimeSeconds: strength.crackTimeSeconds,
    guesses: strength.guesses,
    warning: breached ? breachWarning(count) : strength.warning,
    suggestions,
    breached,
    breachCount: count,
  };
}
