// zxcvbn l33t readings (Wheeler, "zxcvbn: Low-Budget Password Strength Estimation", USENIX Security 2016): the
// substituted readings of a password, exactly as @zxcvbn-ts/core's unmunger lists them, without its per-step copies.
import type { Options } from '@zxcvbn-ts/core';

/** One l33t change: `substitution` in the password read as `letter`, at index `i` of the substituted text. */
export interface Change {
  i: number;
  letter: string;
  substitution: string;
}

export interface Variant {
  password: string;
  changes: Change[];
  isFullSubstitution: boolean;
}

/** The library's l33t trie: a node per substitution prefix, `subs` (the letters) on a whole substitution. */
interface TrieNode {
  parents: string[];
  subs?: string[];
  getChild(character: string): TrieNode | undefined;
}

interface Substitution {
  sub: string;
  letters: readonly string[];
}

/**
 * The readings of `password`, at most `limit`, in the library's order: depth first, every substitution first (the
 * widest at each index first, no fourth consecutive use of one substitution), then the readings that keep some
 * characters. The library walks the trie from each index and copies the change list at every step of the
 * depth-first walk; here the substitutions at each index are found once and the list is copied per reading
 * (test/unit/password-l33t.test.ts compares both on generated text).
 */
export function substitutedReadings(password: string, limit: number, trieRoot: Options['trieNodeRoot']): Variant[] {
  const n = password.length;
  const root = trieRoot as unknown as TrieNode;
  const at: Substitution[][] = [];
  for (let index = 0; index < n; index += 1) {
    const found: Substitution[] = [];
    let node: TrieNode | undefined = root;
    for (let i = index; i < n && node; i += 1) {
      node = node.getChild(password.charAt(i));
      if (node?.subs) found.push({ sub: node.parents.join(''), letters: node.subs });
    }
    at.push(found.reverse());
  }
  const readings: Variant[] = [];
  const buffer: string[] = [];
  const changes: Change[] = [];
  const walk = (onlyFull: boolean, isFull: boolean, index: number, subIndex: number, lastSub: string | undefined, run: number): void => {
    if (readings.length >= limit) return;
    if (index === n) {
      if (onlyFull === isFull) readings.push({ password: buffer.join(''), changes: changes.slice(), isFullSubstitution: onlyFull });
      return;
    }
    let hasSubs = false;
    for (const { sub, letters } of at[index]) {
      // As the library: no fourth consecutive use of the same substitution.
      if (lastSub === sub && run >= 3) continue;
      hasSubs = true;
      for (const letter of letters) {
        buffer.push(letter);
        changes.push({ i: subIndex, letter, substitution: sub });
        walk(onlyFull, isFull, index + sub.length, subIndex + letter.length, sub, lastSub === sub ? run + 1 : 1);
        changes.pop();
        buffer.pop();
        if (readings.length >= limit) return;
      }
    }
    if (!onlyFull || !hasSubs) {
      buffer.push(password.charAt(index));
      walk(onlyFull, isFull && !hasSubs, index + 1, subIndex + 1, lastSub, run);
      buffer.pop();
    }
  };
  walk(true, true, 0, 0, undefined, 0);
  walk(false, true, 0, 0, undefined, 0);
  return readings;
}
