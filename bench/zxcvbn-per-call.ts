// Per-call CPU time of one zxcvbn-ts estimate as the service's worker runs it (src/adapters/password/zxcvbn-worker.ts).
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';

/** What the service's worker runs for one password: its matchers and options, the analysed text, the cut of a long one. */
type Check = (password: string) => unknown;

async function serviceZxcvbn(): Promise<{ check: Check }> {
  // Loaded by URL so that a change in that module's exports degrades these figures, not the whole bench.
  const mod = (await import(new URL('../src/adapters/password/zxcvbn-worker.ts', import.meta.url).href)) as {
    createZxcvbn?: () => ZxcvbnFactory;
    analysedText?: (password: string) => string;
    checkAnalysed?: (zxcvbn: ZxcvbnFactory, analysed: string) => unknown;
  };
  const { createZxcvbn, analysedText, checkAnalysed } = mod;
  if (typeof createZxcvbn !== 'function' || typeof analysedText !== 'function' || typeof checkAnalysed !== 'function') {
    throw new Error('createZxcvbn(), analysedText() or checkAnalysed() not exported by src/adapters/password/zxcvbn-worker.ts');
  }
  const zxcvbn = createZxcvbn();
  const check: Check = (p) => checkAnalysed(zxcvbn, analysedText(p));
  for (let i = 0; i < 3; i++) for (const p of ['warm-up-pass', 'Xy7!kq2#Lm9z']) check(p);
  return { check };
}

/** Mean CPU milliseconds per check over the given passwords, as text ("n/a (...)" when the options cannot be loaded). */
export async function zxcvbnPerCallMs(passwords: string[], rounds = 10): Promise<string> {
  try {
    const zxcvbn = await serviceZxcvbn();
    for (const p of passwords) zxcvbn.check(p);
    const cpu = process.cpuUsage();
    for (let i = 0; i < rounds; i++) for (const p of passwords) zxcvbn.check(p);
    const used = process.cpuUsage(cpu);
    return `${((used.user + used.system) / 1000 / (rounds * passwords.length)).toFixed(1)} ms CPU (mean of ${passwords.length} passwords)`;
  } catch (err) {
    return `n/a (${(err as Error).message})`;
  }
}
