// Timing of one zxcvbn-ts estimate: typical against crafted passwords, before (2 l33t readings), with the library's
// default l33t pass, the service's matchers on the whole analysed text, and as the service runs it (a long text cut
// where no match is split, docs/adr/0016-honest-password-scores.md); then pool throughput. Run: npx tsx bench/zxcvbn-timing.ts   (--extra-languages: with the de, fr, es-es lists;
// --no-library: skip the slow library-default column)
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { L33T_MAX_SUBSTITUTIONS, analysedText, checkAnalysed, createZxcvbn, zxcvbnOptions } from '../src/adapters/password/zxcvbn-worker.js';
import { createStrengthEstimator } from '../src/adapters/password/pool.js';
import { ESTIMATED_CHARS, truncateForAnalysis } from '../src/domain/password.js';
import { PASSWORDS as BENCH_PASSWORDS } from './endpoints.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*';
const L33T_CHARS = '4@310$!|7+85';
/** Seeded (the same inputs in every run, so runs compare); `--seed N` for another set. */
let state = Number(process.argv[process.argv.indexOf('--seed') + 1]) || 2029;
const randomInt = (n: number): number => {
  state = (state * 1103515245 + 12345) % 2147483648;
  return Math.floor((state / 2147483648) * n);
};
const random = (n: number, alphabet = ALPHABET): string =>
  Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('');

/** Common passwords run together: low entropy per character, many overlapping dictionary matches. */
const PASSWORDS = 'passwordiloveyouprincessrockyoujessicamichaelbabygirlmonkeylovelyjordan1234567qwerty';

interface Case {
  name: string;
  make: () => string;
  calls: number;
  typical?: boolean;
  /** A second yardstick, neither typical nor crafted: the service bench's passwords (bench/endpoints.ts). */
  reference?: boolean;
}
let nextBenchPassword = 0;

const cases: Case[] = [
  { name: '12 chars, "Tr0ub4dor&3x"', make: () => 'Tr0ub4dor&3x', calls: 100, typical: true },
  { name: '12 chars, random', make: () => random(12), calls: 100, typical: true },
  { name: '12 chars, l33t "p@55w0rd1!3$"', make: () => 'p@55w0rd1!3$', calls: 100, typical: true },
  { name: '16 chars, random', make: () => random(16), calls: 100, typical: true },
  { name: "12 chars, make bench's 8 (words...)", make: () => BENCH_PASSWORDS[nextBenchPassword++ % BENCH_PASSWORDS.length], calls: 96, reference: true },
  { name: 'crafted: "01" x60 + unique suffix', make: () => `${'01'.repeat(60)}${random(8)}`, calls: 50 },
  { name: 'crafted: "a" x120 + unique suffix', make: () => `${'a'.repeat(120)}${random(8)}`, calls: 50 },
  { name: 'crafted: l33t unit x12 (128)', make: () => '4@310$!|7+8'.repeat(12).slice(0, 128), calls: 50 },
  { name: 'crafted: random l33t chars (128)', make: () => random(128, L33T_CHARS), calls: 50 },
  { name: '128 chars, random', make: () => random(128), calls: 50 },
  { name: '10,000 chars (cut to 128)', make: () => random(10_000), calls: 50 },
  { name: 'crafted: 36-char sequences x3 (108)', make: () => 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(3), calls: 50 },
  { name: 'crafted: common passwords (84)', make: () => PASSWORDS, calls: 50 },
  { name: 'crafted: 48 weak + 80 l33t chars', make: () => PASSWORDS.slice(0, 48) + random(80, L33T_CHARS), calls: 50 },
  { name: 'crafted: 3 l33t digits "470" (128)', make: () => random(128, '470'), calls: 50 },
];

const extraLanguages = process.argv.includes('--extra-languages');
const withLibrary = !process.argv.includes('--no-library');
const ROUNDS = 7;
const ms = (v: number): string => `${v.toFixed(1).padStart(7)}`;

const t0 = performance.now();
const options = zxcvbnOptions(extraLanguages);
const configurations: Array<{ name: string; check: (pw: string) => unknown }> = [];
const before = new ZxcvbnFactory({ ...options, l33tMaxSubstitutions: 2 });
configurations.push({ name: 'before (2 l33t)', check: (pw) => before.check(truncateForAnalysis(pw)) });
if (withLibrary) {
  const library = new ZxcvbnFactory(options);
  configurations.push({ name: 'library l33t', check: (pw) => library.check(truncateForAnalysis(pw)) });
}
const service = createZxcvbn(extraLanguages);
configurations.push({ name: 'service, whole', check: (pw) => service.check(analysedText(pw)) });
configurations.push({ name: 'service', check: (pw) => checkAnalysed(service, analysedText(pw)) });
console.log(
  `dictionaries common+en${extraLanguages ? '+de+fr+es-es' : ''}, levenshtein off, first 128 code points; ` +
    `service: l33tMaxSubstitutions ${L33T_MAX_SUBSTITUTIONS} (word-index matchers), long repeats collapsed, at most ${ESTIMATED_CHARS} characters estimated (cut where no match is split)`,
);
console.log(`dictionaries built in ${(performance.now() - t0).toFixed(0)} ms`);
for (const c of configurations) for (let i = 0; i < 30; i += 1) c.check(random(12)); // JIT warm-up

// CPU time per call is what a busy shared machine distorts least. Rounds go over every row in turn, and each row
// keeps its least round: a neighbour's burst or a garbage collection inflates one round of one row, never deflates
// it, and alternating spreads a slow spell over all rows instead of one.
console.log(`\nin-process, CPU ms per call (mean over a row's inputs, the least of ${ROUNDS} rounds taken in turn; the same inputs for every column):`);
console.log(`  ${''.padEnd(36)}${configurations.map((c) => c.name.padStart(17)).join('')}`);
const inputsOf = cases.map((c) => Array.from({ length: c.calls }, c.make));
const slow = (conf: { name: string }): boolean => conf.name === 'library l33t' || conf.name.startsWith('before');
const perCallOf = cases.map(() => configurations.map(() => Infinity));
for (let round = 0; round < ROUNDS; round += 1) {
  cases.forEach((c, r) => {
    configurations.forEach((conf, k) => {
      if (slow(conf) && round > 0) return;
      const limit = conf.name === 'library l33t' ? 2 : 4;
      const inputs = slow(conf) && !c.typical ? inputsOf[r].slice(0, limit) : inputsOf[r];
      const cpuStart = process.cpuUsage();
      for (const pw of inputs) conf.check(pw);
      const cpu = process.cpuUsage(cpuStart);
      perCallOf[r][k] = Math.min(perCallOf[r][k], (cpu.user + cpu.system) / 1000 / inputs.length);
    });
  });
}
const typical = configurations.map(() => [] as number[]);
const rows: Array<{ name: string; perCall: number[] }> = [];
cases.forEach((c, r) => {
  const perCall = perCallOf[r];
  if (c.typical) perCall.forEach((value, k) => typical[k].push(value));
  rows.push({ name: c.name, perCall });
  console.log(`  ${c.name.padEnd(36)}${perCall.map((v) => ms(v).padStart(17)).join('')}`);
});
const typicalMean = typical.map((values) => values.reduce((a, b) => a + b, 0) / values.length);
console.log(`  ${'typical (mean of the rows above *)'.padEnd(36)}${typicalMean.map((v) => ms(v).padStart(17)).join('')}`);
console.log('\nworst other row / typical mean:');
// Every row that is not typical is input a client can send: long random text as much as crafted repeats.
const crafted = rows.filter((r) => { const c = cases.find((x) => x.name === r.name); return !c?.typical && !c?.reference; });
const reference = rows.find((r) => cases.find((c) => c.name === r.name)?.reference);
configurations.forEach((conf, k) => {
  const worst = crafted.reduce((a, r) => (r.perCall[k] > a.perCall[k] ? r : a));
  const second = reference ? `; ${(worst.perCall[k] / reference.perCall[k]).toFixed(1)}x the make bench row` : '';
  console.log(`  ${conf.name.padEnd(17)} ${(worst.perCall[k] / typicalMean[k]).toFixed(1)}x  (${worst.name})${second}`);
});
console.log("  * typical rows: the 12- and 16-character ones; the make bench row (the password row's 8 passwords, words and");
console.log('    digits as people choose them) is neither typical nor crafted here');

console.log('\nworker pool (default threads), 12-char random passwords, 32 in flight:');
const estimator = createStrengthEstimator({ extraLanguages });
await Promise.all(Array.from({ length: 8 }, () => estimator.estimate(random(12)))); // all workers up
const total = 600;
const inputs = Array.from({ length: total }, () => random(12));
let next = 0;
const start = performance.now();
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < inputs.length) await estimator.estimate(inputs[next++]);
  }),
);
const seconds = (performance.now() - start) / 1000;
console.log(`  ${total} estimates in ${seconds.toFixed(2)} s = ${(total / seconds).toFixed(0)} per second`);
await estimator.close();
