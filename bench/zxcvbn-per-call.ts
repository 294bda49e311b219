// Per-call CPU time of one zxcvbn-ts estimate with the service's own options (src/adapters/zxcvbn-worker.ts), and its CPU profile.
import { Session } from 'node:inspector/promises';
import { ZxcvbnFactory, type OptionsType } from '@zxcvbn-ts/core';
import type { CpuProfile } from './cpuprofile-top.js';

async function serviceZxcvbn(): Promise<ZxcvbnFactory> {
  // Loaded by URL so that a change in that module's exports degrades these figures, not the whole bench.
  const mod = (await import(new URL('../src/adapters/zxcvbn-worker.ts', import.meta.url).href)) as { zxcvbnOptions?: () => OptionsType };
  if (typeof mod.zxcvbnOptions !== 'function') throw new Error('zxcvbnOptions() not exported by src/adapters/zxcvbn-worker.ts');
  const zxcvbn = new ZxcvbnFactory(mod.zxcvbnOptions());
  for (let i = 0; i < 3; i++) for (const p of ['warm-up-pass', 'Xy7!kq2#Lm9z']) zxcvbn.check(p);
  return zxcvbn;
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

/**
 * A CPU profile of the estimates alone, in this process (what the service's worker threads run; node --cpu-prof
 * does not write the profiles of worker threads that are terminated at exit).
 */
export async function profileZxcvbn(passwords: string[], rounds = 20): Promise<CpuProfile> {
  const zxcvbn = await serviceZxcvbn();
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    for (let i = 0; i < rounds; i++) for (const p of passwords) zxcvbn.check(p);
    const { profile } = await session.post('Profiler.stop');
    return profile as unknown as CpuProfile;
  } finally {
    session.disconnect();
  }
}
