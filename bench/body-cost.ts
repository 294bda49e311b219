// What a JSON POST body costs the framework by itself: bare Koa answering GET (the bench's baseline) alternated with
// the same Koa reading the card endpoint's POST bodies through koa-body first, the idiomatic Koa way. The ratio is what
// a Koa app reading bodies so reaches before doing any work of its own (issue 8 asks card for 0.5x of the baseline);
// the service reads bodies through koa-body too (src/http/json-body.ts, docs/adr/0010), so this is its floor for card.
// Run: node --import tsx bench/body-cost.ts [--rounds 7] [--seconds 1]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { endpoint, requestsFor, type RequestSpec } from './endpoints.js';
import { median, runLoad } from './measure.js';
import { cpuSeconds, startBaseline, type Proc } from './processes.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, seconds: { type: 'string', default: '1' } } });
const rounds = Number(values.rounds);
const durationS = Number(values.seconds);
const connections = 32;

interface Side {
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

const dir = mkdtempSync(join(tmpdir(), 'vls-body-cost-'));
const get = await startBaseline('koa-get', 'baseline-koa.ts', dir);
const post = await startBaseline('koa-body-post', 'baseline-koa.ts', dir, [], { KOA_BODY: '1' });
try {
  const a: Side = { proc: get, requests: [{ method: 'GET', path: '/', headers: {} }], rps: [], cpuUs: [] };
  const b: Side = { proc: post, requests: requestsFor(endpoint('card'), '').map((r) => ({ ...r, path: '/' })), rps: [], cpuUs: [] };
  for (let i = 0; i < 3; i++) for (const s of [a, b]) await measure(s, false); // JIT warm-up of both
  for (let i = 0; i < rounds; i++) for (const s of i % 2 ? [b, a] : [a, b]) await measure(s);
  const ratios = b.rps.map((r, i) => r / a.rps[i]);
  const line = (name: string, s: Side) => `${name}: ${median(s.rps).toFixed(0)} req/s, ${median(s.cpuUs).toFixed(1)} us CPU/response`;
  process.stdout.write(
    `${line('bare Koa, GET', a)}\n${line('bare Koa + koa-body, the card POST bodies', b)}\n` +
      `POST/GET req/s ${median(ratios).toFixed(2)}x (median of ${rounds} alternated rounds of ${durationS} s: ` +
      `${ratios.map((r) => r.toFixed(2)).join(', ')})\n`,
  );
} finally {
  await get.stop();
  await post.stop();
  rmSync(dir, { recursive: true, force: true });
}
