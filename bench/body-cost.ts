// What a JSON POST body costs the framework by itself: bare Koa answering GET (the bench's baseline) alternated with
// the same Koa reading the card endpoint's POST bodies through koa-body first, the idiomatic Koa way. The ratio is what
// a Koa app reading bodies so reaches before doing any work of its own (issue 8 asks card for 0.5x of the baseline);
// the service reads bodies through koa-body too (src/http/json-body.ts, docs/adr/0010), so this is its floor for card.
// --stack adds the designed stack with nothing of ours on it (bench/stack-floor.ts: koa-body, openapi-backend on the
// precompiled router and validator, fixed answers), --service the service itself (dist/, built): all in one rotation.
// Run: node --import tsx bench/body-cost.ts [--rounds 7] [--seconds 1] [--stack] [--service] [--endpoint card|bic]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BREACHED, endpoint, probe, requestsFor, type RequestSpec } from './endpoints.js';
import { startFixtures, type Fixtures } from './fixtures.js';
import { median, runLoad } from './measure.js';
import { cpuSeconds, createKey, startBaseline, startService, type Proc } from './processes.js';
import { geoDatabases, serviceEnv } from './service-env.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '1' },
    stack: { type: 'boolean', default: false },
    service: { type: 'boolean', default: false },
    endpoint: { type: 'string', default: 'card' },
  },
});
const rounds = Number(values.rounds);
const durationS = Number(values.seconds);
const connections = 32;
const target = endpoint(values.endpoint!);

interface Side {
  label: string;
  proc: Proc;
  requests: RequestSpec[];
  rps: number[];
  cpuUs: number[];
}

async function measure(side: Side, record = true): Promise<void> {
  const cpu0 = cpuSeconds(side.proc.pid);
  const m = await runLoad({ url: side.proc.url, requests: side.requests, connections, durationS });
  if (m.non2xx + m.errors > 0) throw new Error(`${side.proc.name}: ${m.non2xx} non-2xx answers, ${m.errors} errors`);
  if (!record) return;
  side.rps.push(m.rps);
  side.cpuUs.push(((cpuSeconds(side.proc.pid) - cpu0) * 1e6) / m.responses);
}

const side = (label: string, proc: Proc, requests: RequestSpec[]): Side => ({ label, proc, requests, rps: [], cpuUs: [] });
const dir = mkdtempSync(join(tmpdir(), 'vls-body-cost-'));
const sides: Side[] = [];
let fixtures: Fixtures | null = null;
try {
  sides.push(side('bare Koa, GET', await startBaseline('koa-get', 'baseline-koa.ts', dir), [{ method: 'GET', path: '/', headers: {} }]));
  if (target.bodies) {
    const bodies = requestsFor(target, '').map((r) => ({ ...r, path: '/' }));
    sides.push(side(`bare Koa + koa-body, the ${target.id} POST bodies`, await startBaseline('koa-body-post', 'baseline-koa.ts', dir, [], { KOA_BODY: '1' }), bodies));
  }
  if (values.stack) sides.push(side(`designed stack, nothing of ours, ${target.label}`, await startBaseline('stack-floor', 'stack-floor.ts', dir), requestsFor(target, 'any')));
  if (values.service) {
    fixtures = await startFixtures(dir, BREACHED);
    const env = serviceEnv(fixtures, join(dir, 'svc'), geoDatabases());
    const key = await createKey('body-cost', env, dir);
    const proc = await startService({ name: 'service', env, dir });
    const p = await probe(proc.url, target, key);
    if (!p.ok) throw new Error(`service: ${p.problem}`);
    sides.push(side(`the service, ${target.label}`, proc, requestsFor(target, key)));
  }
  for (let i = 0; i < 3; i++) for (const s of sides) await measure(s, false); // JIT warm-up of each
  for (let i = 0; i < rounds; i++) for (const s of i % 2 ? [...sides].reverse() : sides) await measure(s);
  const [koa] = sides;
  const lines = sides.map((s) => {
    const ratios = s.rps.map((r, i) => r / koa.rps[i]);
    const versus = s === koa ? '' : `; ${median(ratios).toFixed(2)}x of bare Koa's GET (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})`;
    return `${s.label}: ${median(s.rps).toFixed(0)} req/s, ${median(s.cpuUs).toFixed(1)} us CPU/response${versus}`;
  });
  process.stdout.write(`${rounds} alternated rounds of ${durationS} s per side\n${lines.join('\n')}\n`);
} finally {
  for (const s of sides) await s.proc.stop();
  await fixtures?.close();
  rmSync(dir, { recursive: true, force: true });
}
