// CPU time of zxcvbn's two phases on crafted and typical text: matching, then the "most guessable match sequence"
// (Wheeler 2016) with the library's Scoring and with FastScoring (src/adapters/password/zxcvbn/scoring.ts; same results).
// Run: npx tsx bench/zxcvbn-scoring.ts
import { createRequire } from 'node:module';
import type { Options } from '@zxcvbn-ts/core';
import { FastScoring } from '../src/adapters/password/zxcvbn/scoring.js';
import { createZxcvbn } from '../src/adapters/password/zxcvbn-worker.js';

type Match = Parameters<FastScoring['mostGuessableMatchSequence']>[1][number];
type Score = (password: string, matches: Match[]) => unknown;

const load = createRequire(import.meta.url);
const LibraryScoring = load('@zxcvbn-ts/core/dist/scoring/index.cjs') as new (options: Options) => { mostGuessableMatchSequence: Score };

/** Fixed pseudo-random text (a linear congruential generator), so every run scores the same inputs. */
function text(alphabet: string, length: number, seed: number): string {
  let state = seed;
  let out = '';
  for (let k = 0; k < length; k += 1) {
    state = (state * 1103515245 + 12345) % 2147483648;
    out += alphabet[state % alphabet.length];
  }
  return out;
}

const cases: Array<{ name: string; texts: string[] }> = [
  { name: '12 chars, random', texts: Array.from({ length: 20 }, (_, s) => text('abcdefghijklmnopqrstuvwxyz0123456789!@#$', 12, s + 1)) },
  { name: '"Tr0ub4dor&3x"', texts: ['Tr0ub4dor&3x'] },
  { name: 'random l33t chars (128)', texts: Array.from({ length: 5 }, (_, s) => text('4@310$!|7+85', 128, s + 1)) },
  { name: '"01" x60 + suffix (128)', texts: [`${'01'.repeat(60)}Zq8#vLm2`] },
  { name: 'common passwords (84)', texts: ['passwordiloveyouprincessrockyoujessicamichaelbabygirlmonkeylovelyjordan1234567qwerty'] },
  { name: '3 l33t digits "470" (128)', texts: Array.from({ length: 5 }, (_, s) => text('470', 128, s + 1)) },
];

const factory = createZxcvbn();
const options = (factory as unknown as { options: Options }).options;
const match = (pw: string): Match[] => (factory as unknown as { main(pw: string): Match[] }).main(pw);
const library = new LibraryScoring(options);
const fast = new FastScoring(options);
const phases: Array<{ name: string; run: (pw: string, matches: Match[]) => unknown }> = [
  { name: 'matching', run: (pw) => match(pw) },
  { name: 'library Scoring', run: (pw, m) => library.mostGuessableMatchSequence(pw, m) },
  { name: 'FastScoring', run: (pw, m) => fast.mostGuessableMatchSequence(pw, m) },
];

/** CPU ms per call: the least of five rounds (a shared machine only ever adds time). */
function cpuPerCall(texts: string[], matches: Match[][], run: (pw: string, m: Match[]) => unknown, calls: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round += 1) {
    const copies = Array.from({ length: calls }, (_, k) => structuredClone(matches[k % texts.length]));
    const start = process.cpuUsage();
    for (let k = 0; k < calls; k += 1) run(texts[k % texts.length], copies[k]);
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000 / calls);
  }
  return best;
}

for (const c of cases) for (const pw of c.texts) for (const phase of phases) phase.run(pw, match(pw)); // JIT warm-up
console.log('CPU ms per call (least of 5 rounds), service matchers (createZxcvbn), excludeAdditive false');
console.log(`  ${''.padEnd(30)}${phases.map((p) => p.name.padStart(17)).join('')}`);
for (const c of cases) {
  const matches = c.texts.map(match);
  const calls = Math.max(10, c.texts.length * 2);
  const row = phases.map((p) => cpuPerCall(c.texts, matches, p.run, calls).toFixed(2).padStart(17));
  console.log(`  ${c.name.padEnd(30)}${row.join('')}`);
}
