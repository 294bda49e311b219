// Sorted word index for zxcvbn's dictionary matchers (Wheeler, "zxcvbn: Low-Budget Password Strength Estimation",
// USENIX Security 2016): which windows starting at one position are words, without slicing every window.

/** The words of every list, sorted by UTF-16 code unit (String.prototype.sort's order), each once. */
export class WordIndex {
  private readonly words: string[];
  /** Bit b % 32 of lists[k * stride + (b >> 5)] is set when list b (in the order given) holds words[k]. */
  private readonly lists: Int32Array;
  private readonly stride: number;
  /** Where the words beginning with a code unit start and end in `words`. */
  private readonly byFirst = new Map<number, [number, number]>();

  constructor(lists: ReadonlyArray<Record<string, number>>) {
    this.stride = Math.max(1, Math.ceil(lists.length / 32));
    // One pass over the lists: which lists hold each word, 32 lists per mask.
    const masks = Array.from({ length: this.stride }, () => new Map<string, number>());
    lists.forEach((list, b) => {
      const mask = masks[b >> 5];
      const bit = 1 << (b & 31);
      for (const word of Object.keys(list)) if (word.length > 0) mask.set(word, (mask.get(word) ?? 0) | bit);
    });
    const all = this.stride === 1 ? masks[0] : new Map(masks.flatMap((m) => [...m.keys()].map((w) => [w, 0] as const)));
    this.words = [...all.keys()].sort();
    this.lists = new Int32Array(this.words.length * this.stride);
    this.words.forEach((word, k) => {
      for (let w = 0; w < this.stride; w += 1) this.lists[k * this.stride + w] = masks[w].get(word) ?? 0;
    });
    for (let k = 0; k < this.words.length; ) {
      const first = this.words[k].charCodeAt(0);
      let end = k + 1;
      while (end < this.words.length && this.words[end].charCodeAt(0) === first) end += 1;
      this.byFirst.set(first, [k, end]);
      k = end;
    }
  }

  get size(): number {
    return this.words.length;
  }

  /** Whether list b holds the word at sorted position k (a position WordIndex.wordsAt reported). */
  holds(k: number, b: number): boolean {
    return (this.lists[k * this.stride + (b >> 5)] & (1 << (b & 31))) !== 0;
  }

  /**
   * Every end j in [minEnd, maxEnd], ascending, such that text.slice(i, j + 1) is a word, written to `out` with the
   * word's sorted position (for WordIndex.holds); `text` is already lower-cased as the lists are. Walks down the sorted words one
   * character at a time and stops as soon as no word continues the window, so a window no word begins with costs a
   * few comparisons and no string. `out.reach` is then the last j such that some word begins with text[i..j].
   */
  wordsAt(text: string, i: number, minEnd: number, maxEnd: number, out: WordEnds): void {
    out.count = 0;
    out.reach = i - 1;
    const range = this.byFirst.get(text.charCodeAt(i));
    if (!range || maxEnd < i) return;
    let lo = range[0];
    let hi = range[1];
    for (let j = i; ; ) {
      out.reach = j;
      const depth = j - i + 1;
      // [lo, hi) hold the words that begin with text[i..j]; the shortest, if it is exactly that, sorts first.
      if (j >= minEnd && this.words[lo].length === depth) out.add(j, lo);
      j += 1;
      if (j > maxEnd || j >= text.length) return;
      const code = text.charCodeAt(j);
      lo = this.firstAtLeast(lo, hi, depth, code);
      hi = this.firstAtLeast(lo, hi, depth, code + 1);
      if (lo >= hi) return;
    }
  }

  /** First k in [lo, hi) whose code unit at `depth` is >= code (a word that ends before `depth` counts as -1). */
  private firstAtLeast(lo: number, hi: number, depth: number, code: number): number {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const word = this.words[mid];
      const at = depth < word.length ? word.charCodeAt(depth) : -1;
      if (at < code) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** What WordIndex.wordsAt found: `count` ends and the words' sorted positions, reused from call to call. */
export class WordEnds {
  ends = new Int32Array(32);
  positions = new Int32Array(32);
  count = 0;
  reach = -1;

  add(end: number, position: number): void {
    if (this.count === this.ends.length) {
      const ends = new Int32Array(this.count * 2);
      const positions = new Int32Array(this.count * 2);
      ends.set(this.ends);
      positions.set(this.positions);
      this.ends = ends;
      this.positions = positions;
    }
    this.ends[this.count] = end;
    this.positions[this.count] = position;
    this.count += 1;
  }
}

const shared = new WeakMap<object, WordIndex>();

/** One index per zxcvbn Options object (every matcher of a factory shares it): ~2 MB for common + en. */
export function wordIndexFor(options: object, lists: () => ReadonlyArray<Record<string, number>>): WordIndex {
  let index = shared.get(options);
  if (!index) {
    index = new WordIndex(lists());
    shared.set(options, index);
  }
  return index;
}
