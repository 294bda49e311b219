// Two builds of the service in turn under one load (the fixed bench's rotation): CPU per request and req/s, new/old.
// `node --import tsx bench/ab.ts BASE_DIR`, BASE_DIR a built checkout of the old code (its dist/src/main.js;
// node_modules found from there upwards), this tree's dist/ the new one. Env: AB_ENDPOINT (bic), BENCH_* (session.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BREACHED, endpoint, requestsFor } from './endpoints.js';
import { startFixtures } from './fixtures.js';
import { median } from './load.js';
import { ROOT } from './processes.js';
import { geoDatabases, serviceEnv } from './service-env.js';
import { ratioOf, Session, type Launched, type Side } from './session.js';

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: node --import tsx bench/ab.ts BASE_DIR (a built checkout of the code to compare with)\n');
  process.exit(2);
}
const id = process.env.AB_ENDPOINT ?? 'bic';
const run = new Session(mkdtempSync(join(tmpdir(), 'vls-ab-')));
const fixtures = await startFixtures(run.dir, BREACHED);
const start = (name: string, main: string) => run.launch({ name, env: serviceEnv(fixtures, run.freshDir(name), geoDatabases()), dir: run.dir, main }, name, []);
const sides = [await start('A-base', join(resolve(base), 'dist/src/main.js')), await start('B-this', join(ROOT, 'dist/src/main.js'))];
try {
  if (sides.some((s) => !s)) throw new Error(`a build did not start: ${run.rows.map((r) => r.note).join('; ')}`);
  const side = (l: Launched): Side => ({ id: l.label, label: l.label, url: l.svc.url, requests: requestsFor(endpoint(id), l.key), pid: l.svc.pid });
  const r = await run.rotate('A/B', sides.map((s) => side(s!)));
  const cpu = r.slices[1].map((b, k) => b.cpuUsPerReq / r.slices[0][k].cpuUsPerReq);
  const rps = ratioOf(r, 'B-this', 'A-base')!;
  process.stdout.write(
    `${id}: CPU per request B/A median ${median(cpu).toFixed(3)} (${cpu.map((x) => x.toFixed(2)).join(', ')}); ` +
      `A ${median(r.slices[0].map((s) => s.cpuUsPerReq)).toFixed(1)} us, B ${median(r.slices[1].map((s) => s.cpuUsPerReq)).toFixed(1)} us; req/s B/A median ${rps.ratio.toFixed(3)}\n`,
  );
} finally {
  for (const s of sides) await s?.svc.stop();
  await fixtures.close();
  rmSync(run.dir, { recursive: true, force: true });
}
process.exit(0);
