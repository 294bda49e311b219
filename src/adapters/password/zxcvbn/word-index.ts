// Sorted word index for zxcvbn's dictionary matchers (Wheeler, "zxcvbn: Low-Budget Password Strength Estimation",
// USENIX Security 2016): which windows starting at one position are words, without slicing every window.

/**
 * The words of every list in typed arrays, so that one copy in SharedArrayBuffers serves every worker thread: the
 * words sorted by UTF-16 code unit (String.prototype.sort's order), each once, as code units in `text` from
 * `starts[k]` to `starts[k + 1]`; the lists holding word k are `lists[e]` for e from `entries[k]` to
 * `entries[k + 1]`, with the word's rank there in `ranks[e]` (the library's: the position of its last occurrence,
 * from 1); `maxWordSize[b]` is the longest entry of list b.
 */
export interface WordTable {
  names: string[];
  maxWordSize: number[];
  text: Uint16Array;
  starts: Int32Array;
  entries: Int32Array;
  lists: Uint8Array;
  ranks: Int32Array;
}

/**
 * A table of `lists` (name -> entries, in rank order) in buffers made by `alloc` (SharedArrayBuffer to share them).
 * Two passes over the lists and nothing allocated per word but its Map entry: what a builder thread leaves behind in
 * the process's allocator is then small.
 */
export function buildWordTable(lists: Record<string, ReadonlyArray<string | number>>, alloc: (bytes: number) => ArrayBufferLike = (b) => new ArrayBuffer(b)): WordTable {
  const names = Object.keys(lists);
  if (names.length > 255) throw new Error('a word table holds at most 255 lists');
  const position = new Map<string, number>();
  const maxWordSize = names.map((name) => {
    let longest = 0;
    for (const entry of lists[name]) {
      const word = String(entry);
      longest = Math.max(longest, word.length);
      if (word.length > 0) position.set(word, (position.get(word) ?? 0) + 1);
    }
    return longest;
  });
  const words = [...position.keys()].sort();
  const starts = new Int32Array(alloc(4 * (words.length + 1)));
  const entries = new Int32Array(alloc(4 * (words.length + 1)));
  words.forEach((w, k) => {
    starts[k + 1] = starts[k] + w.length;
    entries[k + 1] = entries[k] + position.get(w)!; // occurrences: an upper bound of the lists holding it
    position.set(w, k);
  });
  const text = new Uint16Array(alloc(2 * starts[words.length]));
  words.forEach((w, k) => {
    for (let c = 0; c < w.length; c += 1) text[starts[k] + c] = w.charCodeAt(c);
  });
  const listOf = new Uint8Array(alloc(entries[words.length]));
  const ranks = new Int32Array(alloc(4 * entries[words.length]));
  const used = new Int32Array(words.length); // entries filled per word
  names.forEach((name, b) => {
    lists[name].forEach((entry, r) => {
      const word = String(entry);
      if (word.length === 0) return;
      const k = position.get(word)!;
      let e = entries[k];
      while (e < entries[k] + used[k] && listOf[e] !== b) e += 1;
      if (e === entries[k] + used[k]) used[k] += 1; // a later occurrence in the same list overwrites its rank
      listOf[e] = b;
      ranks[e] = r + 1;
    });
  });
  return { names, maxWordSize, text, starts, entries, lists: listOf, ranks };
}

/** Sorted word index over a WordTable: which windows starting at one position are words. */
export class WordIndex {
  /** Where the words beginning with a code unit start and end in the table. */
  private readonly byFirst = new Map<number, [number, number]>();

  constructor(readonly table: WordTable) {
    const { text, starts } = table;
    for (let k = 0; k < this.size; ) {
      const first = text[starts[k]];
      let end = k + 1;
      while (end < this.size && text[starts[end]] === first) end += 1;
      this.byFirst.set(first, [k, end]);
      k = end;
    }
  }

  /** An index of ranked lists (name -> word -> rank), in this process's memory. */
  static of(lists: Record<string, Record<string, number>>): WordIndex {
    const ordered: Record<string, string[]> = {};
    for (const [name, ranked] of Object.entries(lists)) {
      const byRank: string[] = [];
      for (const [word, rank] of Object.entries(ranked)) byRank[rank - 1] = word;
      ordered[name] = byRank.map((w) => w ?? '');
    }
    return new WordIndex(buildWordTable(ordered));
  }

  get size(): number {
    return this.table.starts.length - 1;
  }

  /** The rank of the word at sorted position k in list b (0: not in it); k as WordIndex.wordsAt reported. */
  rank(k: number, b: number): number {
    const { entries, lists, ranks } = this.table;
    for (let e = entries[k]; e < entries[k + 1]; e += 1) if (lists[e] === b && ranks[e] !== 0) return ranks[e];
    return 0;
  }

  holds(k: number, b: number): boolean {
    return this.rank(k, b) !== 0;
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
      if (j >= minEnd && this.length(lo) === depth) out.add(j, lo);
      j += 1;
      if (j > maxEnd || j >= text.length) return;
      const code = text.charCodeAt(j);
      lo = this.firstAtLeast(lo, hi, depth, code);
      hi = this.firstAtLeast(lo, hi, depth, code + 1);
      if (lo >= hi) return;
    }
  }

  private length(k: number): number {
    return this.table.starts[k + 1] - this.table.starts[k];
  }

  /** First k in [lo, hi) whose code unit at `depth` is >= code (a word that ends before `depth` counts as -1). */
  private firstAtLeast(lo: number, hi: number, depth: number, code: number): number {
    const { text, starts } = this.table;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = depth < starts[mid + 1] - starts[mid] ? text[starts[mid] + depth] : -1;
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

const indexes = new WeakMap<object, WordIndex>();

/**
 * One index per zxcvbn dictionary object (every matcher of a factory shares it): the one registered for it
 * (useWordTable, a table shared between threads), else one built from the ranked lists (~2 MB for common + en).
 */
export function wordIndexFor(dictionary: object, lists: () => Record<string, Record<string, number>>): WordIndex {
  let index = indexes.get(dictionary);
  if (!index) {
    index = WordIndex.of(lists());
    indexes.set(dictionary, index);
  }
  return index;
}

/** Let the factory made with `dictionary` (its lists left empty) read its words from `table`. */
export function useWordTable(dictionary: object, table: WordTable): void {
  indexes.set(dictionary, new WordIndex(table));
}
