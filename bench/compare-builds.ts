// Two builds of the service under the same load: which costs less per request. Each build is started twice, in the
// order A, B, B, A, and the four services take turns under the load round after round: on this 2-core host the same
// build started twice measured ~8% apart (the second-started one faster), which a plain A/B would read as a change.
// Run: node --import tsx bench/compare-builds.ts --base DIR [--new DIR] [--endpoint card] [--rounds 12] [--seconds 1.5]
// where DIR is a checkout with its dist/ built (e.g. `git worktree add /tmp/base HEAD~1`, node_modules linked, then
// `npx tsc -p tsconfig.build.json` there); --new defaults to this checkout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BREACHED, endpoint, probe, requestsFor } from './endpoints.js';
import { startFixtures } from './fixtures.js';
import { median, runLoad } from './measure.js';
import { cpuSeconds, createKey, ROOT, startService, type Proc } from './processes.js';
import { geoDatabases, serviceEnv } from './service-env.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    new: { type: 'string', default: ROOT },
    endpoint: { type: 'string', default: 'card' },
    rounds: { type: 'string', default: '12' },
    seconds: { type: 'string', default: '1.5' },
  },
});
if (!values.base) throw new Error('--base DIR is required (a checkout with dist/ built)');
const builds = { base: resolve(values.base, 'dist/src/main.js'), new: resolve(values.new!, 'dist/src/main.js') };
const target = endpoint(values.endpoint!);
const rounds = Number(values.rounds);
const durationS = Number(values.seconds);

interface Side {
  build: keyof typeof builds;
  proc: Proc;
  key: string;
  rps: number[];
  cpuUs: number[];
}

const dir = mkdtempSync(join(tmpdir(), 'vls-compare-'));
const fixtures = await startFixtures(dir, BREACHED);
const sides: Side[] = [];
try {
  for (const [i, build] of (['base', 'new', 'new', 'base'] as const).entries()) {
    const env = serviceEnv(fixtures, join(dir, `svc${i}`), geoDatabases());
    const key = await createKey(`compare-${i}`, env, dir);
    const proc = await startService({ name: `${build}-${i}`, env, dir, main: builds[build] });
    await probe(proc.url, target, key);
    await runLoad({ url: proc.url, requests: requestsFor(target, key), connections: 32, durationS: 3 }); // JIT warm-up
    sides.push({ build, proc, key, rps: [], cpuUs: [] });
  }
  for (let round = 0; round < rounds; round++) {
    for (const s of round % 2 ? [...sides].reverse() : sides) {
      const cpu0 = cpuSeconds(s.proc.pid);
      const m = await runLoad({ url: s.proc.url, requests: requestsFor(target, s.key), connections: 32, durationS });
      if (m.non2xx + m.errors > 0) throw new Error(`${s.proc.name}: ${m.non2xx} non-2xx answers, ${m.errors} errors`);
      s.rps.push(m.rps);
      s.cpuUs.push(((cpuSeconds(s.proc.pid) - cpu0) * 1e6) / m.responses);
    }
  }
  // Per round, each build's mean over its two services; the ratios new/base of those, and their median.
  const mean = (build: Side['build'], k: 'rps' | 'cpuUs', i: number) => {
    const of = sides.filter((s) => s.build === build);
    return of.reduce((sum, s) => sum + s[k][i], 0) / of.length;
  };
  const ratio = (k: 'rps' | 'cpuUs') => Array.from({ length: rounds }, (_, i) => mean('new', k, i) / mean('base', k, i));
  const least = (build: Side['build']) => Math.min(...sides.filter((s) => s.build === build).flatMap((s) => s.cpuUs));
  const cpu = ratio('cpuUs');
  const rps = ratio('rps');
  process.stdout.write(
    `${values.endpoint}, ${rounds} rounds of ${durationS} s per service (A, B, B, A):\n` +
      `  CPU per request new/base ${median(cpu).toFixed(3)}x (rounds: ${cpu.map((r) => r.toFixed(2)).join(', ')}); least ${least('new').toFixed(1)} vs ${least('base').toFixed(1)} us\n` +
      `  req/s new/base ${median(rps).toFixed(3)}x (rounds: ${rps.map((r) => r.toFixed(2)).join(', ')})\n`,
  );
} finally {
  for (const s of sides) await s.proc.stop();
  await fixtures.close();
  rmSync(dir, { recursive: true, force: true });
}
