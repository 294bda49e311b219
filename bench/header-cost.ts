// What the five limit headers (IETF RateLimit fields + quota fields) cost by themselves: two bare node:http servers,
// one sending them, alternated under the same load; the service's limits-on/off ratio cannot beat this.
// Run: node --import tsx bench/header-cost.ts [--rounds 5] [--seconds 2]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { RequestSpec } from './endpoints.js';
import { median, runLoad, type Measured } from './measure.js';
import { cpuSeconds, startBaseline, type Proc } from './processes.js';
import { runWrk, wrkPresent } from './wrk.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '2' } } });
const rounds = Number(values.rounds);
const durationS = Number(values.seconds);
const connections = 32;
const request: RequestSpec = { method: 'GET', path: '/', headers: {} };
const dir = mkdtempSync(join(tmpdir(), 'vls-header-cost-'));

interface Side {
  rps: number[];
  serverUs: number[];
  loaderUs: number[];
}

async function measure(loader: 'autocannon' | 'wrk', svc: Proc, side: Side): Promise<void> {
  const server0 = cpuSeconds(svc.pid);
  const m: Measured =
    loader === 'wrk'
      ? await runWrk({ url: svc.url, request, connections, durationS })
      : await runLoad({ url: svc.url, requests: [request], connections, durationS });
  side.rps.push(m.rps);
  side.serverUs.push(((cpuSeconds(svc.pid) - server0) * 1e6) / m.responses);
  if (m.loaderCpuUs !== null && Number.isFinite(m.loaderCpuUs)) side.loaderUs.push(m.loaderCpuUs / m.responses);
}

const plain = await startBaseline('http-plain', 'baseline-http.ts', dir);
const limited = await startBaseline('http-limit-headers', 'baseline-http.ts', dir, [], { LIMIT_HEADERS: '1' });
try {
  for (const loader of wrkPresent() ? (['autocannon', 'wrk'] as const) : (['autocannon'] as const)) {
    const a: Side = { rps: [], serverUs: [], loaderUs: [] };
    const b: Side = { rps: [], serverUs: [], loaderUs: [] };
    await measure(loader, plain, { rps: [], serverUs: [], loaderUs: [] }); // warm both
    await measure(loader, limited, { rps: [], serverUs: [], loaderUs: [] });
    for (let i = 0; i < rounds; i++) {
      for (const [svc, side] of i % 2 ? ([[limited, b], [plain, a]] as const) : ([[plain, a], [limited, b]] as const)) await measure(loader, svc, side);
    }
    const ratio = median(b.rps.map((r, i) => r / a.rps[i]));
    const line = (s: Side) =>
      `${median(s.rps).toFixed(0)} req/s, server ${median(s.serverUs).toFixed(1)} us CPU/response` +
      (s.loaderUs.length ? `, load generator ${median(s.loaderUs).toFixed(1)} us CPU/response` : '');
    process.stdout.write(
      `${loader}: without the limit headers ${line(a)}\n${loader}: with the five limit headers ${line(b)}\n` +
        `${loader}: with/without req/s ${ratio.toFixed(2)}x (median of ${rounds} alternated rounds of ${durationS} s)\n`,
    );
  }
} finally {
  await plain.stop();
  await limited.stop();
  rmSync(dir, { recursive: true, force: true });
}
