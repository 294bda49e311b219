// The zxcvbn word lists in one shared table (src/adapters/password/zxcvbn/word-index.ts): the library's ranks and
// longest words list by list, and the same estimates as the lists in each thread's memory.
// @module-tag slow (left out of make test-fast): builds the word lists and runs zxcvbn over generated text
import { Options } from '@zxcvbn-ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildWordTable, createTableZxcvbn } from '../../src/adapters/password/zxcvbn/index.js';
import { checkAnalysed, createZxcvbn, estimateStrength, sharedZxcvbnData, zxcvbnOptions } from '../../src/adapters/password/zxcvbn-worker.js';
import { createStrengthEstimator } from '../../src/adapters/password/pool.js';

const SLOW = 120_000;

/** Every (list, word, rank) of a table, as the library's ranked lists would hold them. */
function ranksOf(table: ReturnType<typeof buildWordTable>): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = Object.fromEntries(table.names.map((n) => [n, {}]));
  for (let k = 0; k + 1 < table.starts.length; k += 1) {
    const word = String.fromCharCode(...table.text.subarray(table.starts[k], table.starts[k + 1]));
    for (let e = table.entries[k]; e < table.entries[k + 1]; e += 1) if (table.ranks[e] !== 0) out[table.names[table.lists[e]]][word] = table.ranks[e];
  }
  return out;
}

describe('the word table', () => {
  it.each([false, true])("holds the library's ranked lists and longest words (extra languages: %s)", (extra) => {
    const library = new Options(zxcvbnOptions(extra));
    const table = sharedZxcvbnData(extra).table;
    expect(table.text.buffer).toBeInstanceOf(SharedArrayBuffer);
    const ours = ranksOf(table);
    for (const name of table.names) {
      expect(ours[name], name).toEqual(library.rankedDictionaries[name]);
      expect(table.maxWordSize[table.names.indexOf(name)], name).toBe(library.rankedDictionariesMaxWordSize[name]);
    }
    expect(table.names).toEqual(Object.keys(library.rankedDictionaries).filter((n) => n !== 'userInputs'));
  }, SLOW);

  it('keeps the last rank of a word listed twice, as the library does', () => {
    const table = buildWordTable({ a: ['x', 'y', 'x', 7], b: ['y'] });
    expect(ranksOf(table)).toEqual({ a: { x: 3, y: 2, '7': 4 }, b: { y: 1 } });
    expect(table.maxWordSize).toEqual([1, 1]);
  });
});

describe('estimates from the shared table', () => {
  const shared = sharedZxcvbnData();
  const { translations, graphs, useLevenshteinDistance, l33tMaxSubstitutions, maxLength } = zxcvbnOptions();
  const fromTable = createTableZxcvbn(shared.table, { translations, graphs, useLevenshteinDistance, l33tMaxSubstitutions, maxLength });
  const inMemory = createZxcvbn();
  const result = (factory: typeof inMemory, pw: string): unknown => {
    const r = checkAnalysed(factory, pw);
    return { score: r.score, guesses: r.guesses, sequence: r.sequence, feedback: r.feedback };
  };
  const same = (pw: string) => result(fromTable, pw);
  const expected = (pw: string) => result(inMemory, pw);

  it('equal the estimates of the lists in memory: words, l33t, reversed, sequences, dates, generated text', () => {
    const fixed = ['p4r71c1p473', 'Tr0ub4dor&3', 'correct horse battery staple', 'drowssap', 'one two three', 'january1991', 'qwerty123', 'Zebra-Lamp-7'];
    for (const pw of fixed) expect(same(pw), pw).toEqual(expected(pw));
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'abcdeilnorst0134578@$ -'), minLength: 1, maxLength: 32 }), (pw) => {
        expect(same(pw)).toEqual(expected(pw));
      }),
      { numRuns: 150, seed: 58 },
    );
  }, SLOW);

  it('in the pool: the same strength as estimated in this thread', async () => {
    const pool = createStrengthEstimator({ threads: 1 });
    try {
      for (const pw of ['p4r71c1p473', 'kX9#mP2$vL5q', 'summer2024!!']) expect(await pool.estimate(pw)).toEqual(estimateStrength(pw));
    } finally {
      await pool.close();
    }
  }, SLOW);
});
