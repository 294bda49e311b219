// zxcvbn repeat matcher (Wheeler, "zxcvbn: Low-Budget Password Strength Estimation", USENIX Security 2016): the
// library's own, estimating each repeated unit once per password.
import { createRequire } from 'node:module';
import type { Matcher, Options } from '@zxcvbn-ts/core';

/** Library internals this module builds on (the package has no exports map; these are its CommonJS build). */
const load = createRequire(import.meta.url);

type OmniMatch = unknown;

const library = {
  Matching: load('@zxcvbn-ts/core/dist/matcher/repeat/matching.cjs') as new (options: Options) => {
    getBaseGuesses(baseToken: string, omniMatch: OmniMatch): number | Promise<number>;
  },
  scoring: load('@zxcvbn-ts/core/dist/matcher/repeat/scoring.cjs') as Matcher['scoring'],
  feedback: load('@zxcvbn-ts/core/dist/matcher/repeat/feedback.cjs') as Matcher['feedback'],
};

/** The units estimated during the current password's analysis, per matcher: emptied by forgetRepeatedUnits(). */
const estimated = new Set<Map<string, number>>();

/**
 * The library's repeat matcher. For each run it estimates the repeated unit with a whole nested match and scoring
 * pass; a text of a few characters ("4747 0000 7070...") holds the same units many times, and each estimate is a
 * function of the unit alone (the nested pass reads no user inputs), so one estimate per unit gives the same guesses.
 */
class OncePerUnitRepeatMatcher extends library.Matching {
  private readonly units = new Map<string, number>();
  /**
   * Units of one printable ASCII character, estimated for all 95 at first use (~20 ms once): the commonest units
   * ("0000", "!!!", "zzzz"), and a table that owes nothing to any password.
   */
  private readonly singles = new Map<string, number>();

  constructor(options: Options) {
    super(options);
    estimated.add(this.units);
  }

  getBaseGuesses(baseToken: string, omniMatch: OmniMatch): number | Promise<number> {
    if (baseToken.length === 1) {
      if (this.singles.size === 0) this.estimateSingles(omniMatch);
      const single = this.singles.get(baseToken);
      if (single !== undefined) return single;
    }
    const known = this.units.get(baseToken);
    if (known !== undefined) return known;
    const guesses = super.getBaseGuesses(baseToken, omniMatch);
    if (typeof guesses === 'number') this.units.set(baseToken, guesses);
    return guesses;
  }

  /** The library's own estimate of each printable ASCII character as a unit. */
  private estimateSingles(omniMatch: OmniMatch): void {
    for (let code = 0x20; code < 0x7f; code += 1) {
      const unit = String.fromCharCode(code);
      const guesses = super.getBaseGuesses(unit, omniMatch);
      if (typeof guesses === 'number') this.singles.set(unit, guesses);
    }
  }
}

/** Drop the units of the password just analysed: nothing of a password outlives its estimate. */
export function forgetRepeatedUnits(): void {
  for (const units of estimated) units.clear();
}

/** How many units are held now (tests: none once an estimate is over). */
export function repeatedUnitsHeld(): number {
  let n = 0;
  for (const units of estimated) n += units.size;
  return n;
}

/** Pass among the custom matchers: replaces the built-in "repeat" matcher, with the library's scoring and feedback. */
export const repeatMatcher: Matcher = {
  Matching: OncePerUnitRepeatMatcher as unknown as Matcher['Matching'],
  scoring: library.scoring,
  feedback: library.feedback,
};
