// Timing of one zxcvbn-ts estimate with the service's options (12- and 128-char passwords), plus pool throughput.
// Run: npx tsx bench/zxcvbn-timing.ts            (add --extra-languages to time with the de, fr, es-es lists)
import { randomInt } from 'node:crypto';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { L33T_MAX_SUBSTITUTIONS, zxcvbnOptions } from '../src/adapters/zxcvbn-worker.js';
import { createStrengthEstimator } from '../src/adapters/password-pool.js';
import { truncateForAnalysis } from '../src/domain/password.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*';
const random = (n: number): string => Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

const cases: Array<{ name: string; make: () => string; calls: number }> = [
  { name: '12 chars, "Tr0ub4dor&3x"', make: () => 'Tr0ub4dor&3x', calls: 200 },
  { name: '12 chars, random', make: () => random(12), calls: 200 },
  { name: '12 chars, l33t "p@55w0rd1!3$"', make: () => 'p@55w0rd1!3$', calls: 200 },
  { name: '128 chars, random', make: () => random(128), calls: 20 },
  { name: '128 chars, l33t-heavy', make: () => '4@310$!|7+8'.repeat(12).slice(0, 128), calls: 10 },
  { name: '10,000 chars (cut to 128)', make: () => random(10_000), calls: 10 },
];

const extraLanguages = process.argv.includes('--extra-languages');
const ms = (v: number): string => `${v.toFixed(1).padStart(6)} ms`;

const t0 = performance.now();
const zxcvbn = new ZxcvbnFactory(zxcvbnOptions(extraLanguages));
console.log(
  `options: dictionaries common+en${extraLanguages ? '+de+fr+es-es' : ''}, levenshtein off, ` +
    `l33tMaxSubstitutions ${L33T_MAX_SUBSTITUTIONS}, first 128 code points`,
);
console.log(`dictionaries built in ${(performance.now() - t0).toFixed(0)} ms`);
for (let i = 0; i < 50; i += 1) zxcvbn.check(random(12)); // JIT warm-up

console.log('\nin-process, per call:');
for (const c of cases) {
  const inputs = Array.from({ length: c.calls }, c.make);
  const times: number[] = [];
  const cpuStart = process.cpuUsage();
  for (const pw of inputs) {
    const start = performance.now();
    zxcvbn.check(truncateForAnalysis(pw));
    times.push(performance.now() - start);
  }
  const cpu = process.cpuUsage(cpuStart);
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const p95 = times[Math.min(times.length - 1, Math.floor(times.length * 0.95))];
  // CPU time per call is what a busy shared machine distorts least.
  const cpuMs = (cpu.user + cpu.system) / 1000 / c.calls;
  console.log(
    `  ${c.name.padEnd(32)} wall mean ${ms(mean)} p95 ${ms(p95)}  cpu/call ${ms(cpuMs)}  (n=${c.calls})`,
  );
}

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
