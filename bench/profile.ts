// The cost budget of a BIC request (issue #48): the service under BIC load with V8's --cpu-prof, self time by stage.
//
// `node --import tsx bench/profile.ts` (dist/ built): starts the built service (as `make bench` does: embedded
// store, one key with limits of 10^9, LOG_LEVEL=info to a file, metrics on) with --cpu-prof, warms it up, loads BIC
// for PROFILE_DURATION s (32 connections, autocannon in this process), stops it, and groups the main thread's
// samples of the loaded window by stage; then the same for the Fastify peer (bench/fastify-peer.ts). Prints
// microseconds per request per stage, the process's CPU per request (every thread, /proc) beside it, and writes
// bench/results/profile.md and profile.json. Settings (PROFILE_*): bench/README.md.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BREACHED, endpoint, probe, requestsFor } from './endpoints.js';
import { startFixtures } from './fixtures.js';
import { runLoad } from './load.js';
import { cpuSeconds, orElse, ROOT, startService, startWithKey, statCpuSeconds, waitIdle, type Proc } from './processes.js';
import { geoDatabases, serviceEnv } from './service-env.js';
import { groupProfile, STAGES, type CpuProfile, type Budget } from './profile-stages.js';
import { log, num } from './session.js';
import { NODE_START_ENV, NODE_START_FLAGS } from '../src/heap-tuning.js';

const durationS = num('PROFILE_DURATION', 10) || 10;
const intervalUs = Math.round(num('PROFILE_INTERVAL_US', 250)) || 250;
const targets = (process.env.PROFILE_TARGETS ?? 'service,peer').split(',').map((s) => s.trim());
const connections = 32;
const dir = mkdtempSync(join(tmpdir(), 'vls-profile-'));

/**
 * Load BIC on a started process between two clock readings the profile's sample times can be matched to. CPU per
 * request (us, /proc) of the process, of its main thread (the stages are scaled to add up to it) and of each thread
 * group by name (where the process's CPU beyond the main thread goes).
 */
async function profileRun(name: string, proc: Proc, key: string, profDir: string) {
  // The peer implements BIC only.
  const e = endpoint(name === 'service' ? (process.env.PROFILE_ENDPOINT ?? 'bic') : 'bic');
  const requests = requestsFor(e, key);
  const p = await probe(proc.url, e, key);
  if (!p.ok) throw new Error(`${name}: ${e.label} probe answered ${p.problem}`);
  await waitIdle(proc.pid, 15);
  const warm = await runLoad({ url: proc.url, requests, connections, durationS: 4 });
  log(`${name}: warm-up 4 s (${Math.round(warm.rps)} req/s); profiling ${durationS} s of ${e.label}`);
  // V8's sample times and process.hrtime both read CLOCK_MONOTONIC (microseconds and nanoseconds).
  const cpu0 = cpuSeconds(proc.pid);
  const th0 = threadsBy(proc.pid);
  const t0 = Number(process.hrtime.bigint() / 1000n);
  const m = await runLoad({ url: proc.url, requests, connections, durationS });
  const t1 = Number(process.hrtime.bigint() / 1000n);
  const th1 = threadsBy(proc.pid);
  const perThread = [...th1].map(([n, c]): [string, number] => [n, ((c - (th0.get(n) ?? 0)) * 1e6) / m.responses]).filter(([, v]) => v >= 0.05);
  const cpu1 = cpuSeconds(proc.pid);
  if (m.non2xx + m.errors > 0) throw new Error(`${name}: ${m.non2xx} non-2xx, ${m.errors} errors under load`);
  await proc.stop();
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`${name}: no .cpuprofile written in ${profDir}`);
  const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile;
  const mainUsPerReq = (((th1.get('MainThread') ?? 0) - (th0.get('MainThread') ?? 0)) * 1e6) / m.responses;
  const budget = scaled(groupProfile(profile, t0, t1, m.responses), mainUsPerReq);
  return { name, requests: m.responses, rps: m.rps, p99: m.p99, processUsPerReq: ((cpu1 - cpu0) * 1e6) / m.responses, mainUsPerReq, budget, perThread };
}

/** CPU seconds of each thread of a process by its name (/proc/PID/task/TID/comm: MainThread, V8 workers, libuv...). */
function threadsBy(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const name = orElse(() => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim().replace(/\d+$/, '#'), null);
    if (name !== null) out.set(name, (out.get(name) ?? 0) + statCpuSeconds(`/proc/${pid}/task/${tid}/stat`)); // null: it ended meanwhile
  }
  return out;
}

/**
 * The profiler's intervals are wall time: on a host where the thread waits for a core they overstate its CPU. Each
 * stage keeps its share of the busy samples, scaled to the main thread's CPU time.
 */
function scaled(b: Budget, mainUsPerReq: number): Budget {
  const k = b.busyUsPerReq > 0 ? mainUsPerReq / b.busyUsPerReq : 1;
  const times = (m: Map<string, number>) => new Map([...m].map(([s, v]) => [s, v * k]));
  return { ...b, stages: times(b.stages), leaves: times(b.leaves), wallUsPerReq: b.busyUsPerReq, busyUsPerReq: mainUsPerReq };
}

const results: Array<Awaited<ReturnType<typeof profileRun>>> = [];
const fixtures = await startFixtures(BREACHED);
const PEER_KEY = 'vls_profile_peer_key';
/** Each target by its PROFILE_TARGETS name: its name in the report and its start with `nodeArgs` (the profiler's). */
const TARGETS: Record<string, [string, (nodeArgs: string[]) => Promise<Proc & { key: string }>]> = {
  service: ['service', (nodeArgs) => startWithKey({ name: 'service', env: { ...NODE_START_ENV, ...serviceEnv(fixtures, mkdtempSync(join(dir, 'data-')), geoDatabases()) }, dir, nodeArgs: [...NODE_START_FLAGS, ...nodeArgs], main: process.env.PROFILE_MAIN })],
  peer: ['Fastify peer', async (nodeArgs) => ({ key: PEER_KEY, ...(await startService({ name: 'fastify-peer', env: { PEER_API_KEY: PEER_KEY }, dir, nodeArgs, script: 'fastify-peer.ts', ready: { path: '/' } })) })],
};
try {
  for (const [target, [name, start]] of Object.entries(TARGETS).filter(([t]) => targets.includes(t))) {
    const profDir = join(dir, `${target}-prof`);
    mkdirSync(profDir);
    const proc = await start(['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', String(intervalUs)]);
    results.push(await profileRun(name, proc, proc.key, profDir).finally(() => proc.stop()));
  }
} finally {
  await fixtures.close();
}

// ---- report: one column per target, stages in the service's order, then what the peer spends elsewhere
const us = (v: number) => v.toFixed(1);
const names = STAGES.filter((stage) => results.some((r) => r.budget.stages.has(stage)));
const lines = [
  `| stage | ${results.map((r) => `${r.name} us/req`).join(' | ')} |`,
  `|---|${results.map(() => '---:').join('|')}|`,
  ...names.map((n) => `| ${n} | ${results.map((r) => (r.budget.stages.has(n) ? us(r.budget.stages.get(n)!) : '-')).join(' | ')} |`),
  `| **main thread CPU (/proc), the sum of the above** | ${results.map((r) => `**${us(r.mainUsPerReq)}**`).join(' | ')} |`,
  `| main thread busy in the profile (wall time) | ${results.map((r) => us(r.budget.wallUsPerReq ?? 0)).join(' | ')} |`,
  `| process CPU, every thread (/proc) | ${results.map((r) => us(r.processUsPerReq)).join(' | ')} |`,
  `| threads (us/req by /proc/PID/task name) | ${results.map((r) => r.perThread.map(([n, v]) => `${n} ${v.toFixed(1)}`).join(', ')).join(' | ')} |`,
  `| req/s under the profiler; p99 ms | ${results.map((r) => `${Math.round(r.rps)}; ${r.p99.toFixed(1)}`).join(' | ')} |`,
];
const header =
  `${new Date().toISOString()}, node ${process.version}, ${process.env.PROFILE_ENDPOINT ?? 'bic'} (the peer: BIC), ${connections} connections, ${durationS} s per target, ` +
  `sampling every ${intervalUs} us; samples in the window: ${results.map((r) => `${r.name} ${r.budget.samples}`).join(', ')}`;
const top = Number(process.env.PROFILE_TOP ?? 0);
const leafLines = results.flatMap((r) => [
  ...(top > 0 ? [`\n${r.name}: the ${top} costliest leaf functions, us per request`] : []),
  ...[...r.budget.leaves].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${us(v).padStart(6)}  ${k}`),
]);
const text = `${header}\n\n${lines.join('\n')}\n${leafLines.length ? `${leafLines.join('\n')}\n` : ''}`;
process.stdout.write(`\n${text}`);
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(join(ROOT, 'bench/results/profile.md'), text);
writeFileSync(
  join(ROOT, 'bench/results/profile.json'),
  `${JSON.stringify(results.map((r) => ({ ...r, budget: { ...r.budget, stages: Object.fromEntries(r.budget.stages), leaves: undefined } })), null, 2)}\n`,
);
if (process.env.PROFILE_KEEP === '1') log(`profiles kept in ${dir}`);
else rmSync(dir, { recursive: true, force: true });
process.exit(0);
