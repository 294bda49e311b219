// Two builds of the service alternated under one load (A, B, B, A, ...): CPU per request of each, for a decision on a
// change (BENCHMARKS.md, Method). `node --import tsx bench/ab.ts BASE_DIR` with BASE_DIR a built checkout of the old
// code (its dist/src/main.js; node_modules found from there upwards), this tree's dist/ as the new one.
// Env: AB_ENDPOINT (bic), AB_ROUNDS (8), AB_SLICE (s per slice, 3), AB_CONNECTIONS (32).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BREACHED, endpoint, probe, requestsFor } from './endpoints.js';
import { startFixtures } from './fixtures.js';
import { median, runLoad, warmUntilSteady } from './measure.js';
import { cpuSeconds, createKey, ROOT, startService, waitIdle, type Proc } from './processes.js';
import { geoDatabases, serviceEnv } from './service-env.js';

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: node --import tsx bench/ab.ts BASE_DIR (a built checkout of the code to compare with)\n');
  process.exit(2);
}
const id = process.env.AB_ENDPOINT ?? 'bic';
const rounds = Number(process.env.AB_ROUNDS ?? 8);
const sliceS = Number(process.env.AB_SLICE ?? 3);
const connections = Number(process.env.AB_CONNECTIONS ?? 32);
const dir = mkdtempSync(join(tmpdir(), 'vls-ab-'));
const fixtures = await startFixtures(dir, BREACHED);

interface Side {
  name: string;
  svc: Proc;
  key: string;
  cpuUs: number[];
  rps: number[];
}

async function start(name: string, main: string): Promise<Side> {
  const env = serviceEnv(fixtures, mkdtempSync(join(dir, `${name}-`)), geoDatabases());
  const key = await createKey(name, env, dir);
  const svc = await startService({ name, env, dir, main });
  const p = await probe(svc.url, endpoint(id), key);
  if (!p.ok) throw new Error(`${name}: probe answered ${p.problem}`);
  return { name, svc, key, cpuUs: [], rps: [] };
}

const sides = [await start('A-base', join(resolve(base), 'dist/src/main.js')), await start('B-this', join(ROOT, 'dist/src/main.js'))];
try {
  for (const s of sides) {
    await waitIdle(s.svc.pid, 15);
    await warmUntilSteady(s.svc.url, [], requestsFor(endpoint(id), s.key), connections, 4);
  }
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      const s = sides[i];
      const c0 = cpuSeconds(s.svc.pid);
      const m = await runLoad({ url: s.svc.url, requests: requestsFor(endpoint(id), s.key), connections, durationS: sliceS });
      const c1 = cpuSeconds(s.svc.pid);
      if (m.non2xx + m.errors > 0) throw new Error(`${s.name}: ${m.non2xx} non-2xx, ${m.errors} errors`);
      s.cpuUs.push(((c1 - c0) * 1e6) / m.responses);
      s.rps.push(m.rps);
    }
    process.stderr.write(`round ${r + 1}: A ${sides[0].cpuUs[r].toFixed(1)} us/req ${Math.round(sides[0].rps[r])} req/s; B ${sides[1].cpuUs[r].toFixed(1)} us/req ${Math.round(sides[1].rps[r])} req/s\n`);
  }
  const ratios = sides[1].cpuUs.map((b, k) => b / sides[0].cpuUs[k]);
  const rpsRatios = sides[1].rps.map((b, k) => b / sides[0].rps[k]);
  process.stdout.write(
    `${id}, ${connections} connections, ${rounds} rounds of ${sliceS} s per side: CPU per request B/A median ${median(ratios).toFixed(3)} ` +
      `(${ratios.map((x) => x.toFixed(2)).join(', ')}); A ${median(sides[0].cpuUs).toFixed(1)} us, B ${median(sides[1].cpuUs).toFixed(1)} us; ` +
      `req/s B/A median ${median(rpsRatios).toFixed(3)}\n`,
  );
} finally {
  for (const s of sides) await s.svc.stop();
  await fixtures.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
