// Soak (make soak): the built service under SOAK_SECONDS (60) of mixed traffic on loopback at the highest rate that
// keeps p99 under 50 ms (found by a short ramp), against local upstreams (DNS, range API, TLS with a test CA, MaxMind
// test databases). Reports throughput, errors (must be 0), RSS start/end (growth < 10%), event-loop delay p99.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { validRequests } from '../test/faults/fixtures.js';
import { startFixtures } from './fixtures.js';
import { median, round } from './load.js';
import { rssMb, scrapeMetrics, startWithKey } from './processes.js';
import { geoDatabases, serviceEnv } from './service-env.js';
import { send, summarise, timedLoad, timedPool, type Timed, type TimedRequest } from './timed-load.js';
import { runBench } from './children.js';

// The soak finds the highest rate the service holds on the whole host: nothing pinned (bench/cpu-usage.ts).
process.env.BENCH_PIN ??= '0';

/** For investigations: SOAK_SECONDS, SOAK_RATE (skips the ramp), SOAK_SKIP=operationId,... (leaves operations out). */
const SOAK_S = Number(process.env.SOAK_SECONDS ?? 60);
const STEP_S = 10;
const P99_LIMIT_MS = 50;
/** Ramp targets (requests/s): stop at the first that misses p99, errors, or cannot be delivered. */
const RAMP = [50, 100, 200, 300, 450, 650, 900, 1300, 1800, 2500, 3500, 5000];
const say = (s: string) => process.stdout.write(`${s}\n`);

type Run = Awaited<ReturnType<typeof soakLoad>>;

/** One open-loop run at `target` requests/s, cycling through `requests`; latency figures of the 200 answers. */
async function soakLoad(url: string, requests: TimedRequest[], target: number, seconds: number) {
  const pool = timedPool(url, 512);
  const { samples, elapsedS } = await timedLoad({ pool, request: (i) => requests[i % requests.length], rate: target, until: seconds });
  await pool.close();
  const ok = samples.filter((s) => s.status === 200);
  const { p50, p99, statuses } = { ...summarise(ok), statuses: summarise(samples).statuses };
  const p99ByOperation = Object.fromEntries([...new Set(ok.map((s) => s.label))].map((op) => [op, summarise(ok.filter((s) => s.label === op)).p99]));
  return { target, rps: round(samples.length / elapsedS), p50, p99, responses: samples.length, errors: samples.length - ok.length, statuses, p99ByOperation };
}

/** One scrape of /metrics: event-loop delay p99 since the last scrape (prom-client resets it), and JS heap figures. */
async function scrape(url: string) {
  const { metric } = await scrapeMetrics(url);
  const mb = (name: string) => round(metric(name) / 2 ** 20);
  return { lagP99Ms: round(metric('nodejs_eventloop_lag_p99_seconds') * 1000, 2), heapUsedMb: mb('nodejs_heap_size_used_bytes'), externalMb: mb('nodejs_external_memory_bytes') };
}

type Buckets = Map<string, Map<number, number>>;

/** Cumulative server-side latency buckets per operation (200 answers), from /metrics: operationId -> le -> count. */
async function serverBuckets(url: string): Promise<Buckets> {
  const out: Buckets = new Map();
  for (const m of (await scrapeMetrics(url)).text.matchAll(/^http_request_duration_seconds_bucket\{le="([^"]+)",operationId="([^"]+)",status="200"\} (\d+)$/gm)) {
    if (!out.has(m[2])) out.set(m[2], new Map());
    out.get(m[2])!.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[3]));
  }
  return out;
}

/** Per operation over a window (after minus before): requests and the bucket bound under which 99% were answered. */
function serverP99(before: Buckets, after: Buckets): Record<string, { requests: number; p99UpToMs: number }> {
  const out: Record<string, { requests: number; p99UpToMs: number }> = {};
  for (const [op, buckets] of after) {
    const count = (le: number) => buckets.get(le)! - (before.get(op)?.get(le) ?? 0);
    const total = count(Infinity);
    const le = [...buckets.keys()].sort((a, b) => a - b).find((l) => count(l) >= 0.99 * total) ?? Infinity;
    if (total > 0) out[op] = { requests: total, p99UpToMs: le * 1000 };
  }
  return out;
}

/** Every operation, each answered 200 (own IP through X-Forwarded-For, TRUST_PROXY), equally weighted; warmed up. */
async function soakRequests(url: string, key: string): Promise<TimedRequest[]> {
  const skip = process.env.SOAK_SKIP?.split(',') ?? [];
  const requests = validRequests()
    .filter((r) => !skip.includes(r.operationId))
    .map((r) => ({ ...r, label: r.operationId, headers: { ...r.headers, 'x-api-key': key, ...(r.operationId === 'lookupOwnIp' ? { 'x-forwarded-for': '81.2.69.142' } : {}) } }));
  // Warm-up, concurrent so that every password worker thread loads its dictionaries; every answer must be 200.
  const pool = timedPool(url, 4 * requests.length);
  const samples: Timed[] = [];
  for (let pass = 0; pass < 3; pass++) await Promise.all(requests.flatMap((r) => [r, r, r, r]).map((r) => send(pool, r, samples)));
  await pool.close();
  const bad = samples.find((s) => s.status !== 200);
  if (bad) throw new Error(`${bad.label} answers ${bad.status}`);
  return requests;
}

/** The ramp (each step tried up to three times), then 80% of the edge confirmed over 20 s (stepping down by 20%). */
async function findRate(url: string, requests: TimedRequest[], ramp: Run[]): Promise<number> {
  const fails = (run: Run) => run.p99 >= P99_LIMIT_MS || run.errors > 0 || run.rps < 0.9 * run.target;
  const step = async (what: string, target: number, seconds: number) => {
    const run = await soakLoad(url, requests, target, seconds);
    ramp.push(run);
    say(`${what} ${target}/s: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, errors ${run.errors}`);
    return !fails(run);
  };
  const fixed = Number(process.env.SOAK_RATE ?? 0);
  if (fixed > 0) return fixed;
  let chosen = 0;
  for (const target of RAMP) {
    // A step that misses is tried twice more: one noisy moment on a shared machine should not end the ramp.
    let passed = false;
    for (let attempt = 0; attempt < 3 && !passed; attempt++) passed = await step('ramp', target, STEP_S);
    if (!passed) break;
    chosen = target;
  }
  if (!chosen) {
    say(`soak: even ${RAMP[0]} req/s misses p99 < ${P99_LIMIT_MS} ms; soaking at ${RAMP[0]} req/s`);
    return RAMP[0];
  }
  // Soak at 80% of the edge, so noise on a shared machine does not tip it over; a 10 s step can pass where a minute
  // does not: confirm the rate over 20 s, stepping down by 20% (at most twice).
  let rate = Math.round(chosen * 0.8);
  for (let attempt = 0; !(await step('confirm', rate, 20)) && attempt < 2; attempt++) rate = Math.round(rate * 0.8);
  return rate;
}

/** The soak at `rate`: RSS every second (start and end: medians of the first and last 10 s, the password threads make it swing), /metrics every 10 s. */
async function soak(url: string, pid: number, requests: TimedRequest[], rate: number) {
  await scrape(url); // resets the event-loop delay histogram
  await new Promise((r) => setTimeout(r, 1000));
  const rss: number[] = [];
  const samples: Array<{ s: number; rssMb: number } & Awaited<ReturnType<typeof scrape>>> = [];
  const t0 = Date.now();
  const rssSampler = setInterval(() => rss.push(round(rssMb(pid))), 1000);
  const sampler = setInterval(() => void scrape(url).then((m) => samples.push({ s: Math.round((Date.now() - t0) / 1000), rssMb: rss[rss.length - 1], ...m })), 10_000);
  const before = await serverBuckets(url);
  const run = await soakLoad(url, requests, rate, SOAK_S);
  clearInterval(sampler);
  clearInterval(rssSampler);
  const [start, end] = [median(rss.slice(0, 10)), median(rss.slice(-10))];
  return { run, rss, start, end, growth: round(((end - start) / start) * 100), samples, perOperation: serverP99(before, await serverBuckets(url)) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vls-soak-'));
  const up = await startFixtures();
  const env = { ...serviceEnv(up, dir, geoDatabases(true)), TRUST_PROXY: 'true' };
  const svc = await startWithKey({ name: 'service', env, dir });
  try {
    const requests = await soakRequests(svc.url, svc.key);
    await soakLoad(svc.url, requests, RAMP[0], STEP_S);
    say(`soak: ${requests.length} request kinds over ${new Set(requests.map((r) => r.label)).size} operations; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const ramp: Run[] = [];
    const rate = await findRate(svc.url, requests, ramp);
    const { run, rss, start, end, growth, samples, perOperation } = await soak(svc.url, svc.pid, requests, rate);
    const report = {
      date: new Date().toISOString(),
      machine: { cpus: availableParallelism(), loadAverage: loadavg().map((l) => round(l, 2)) },
      ramp: ramp.map(({ target, rps, p99, errors }) => ({ target, rps, p99, errors })),
      soak: { seconds: SOAK_S, targetRate: rate, throughput: run.rps, responses: run.responses, p50Ms: run.p50, p99Ms: run.p99, errors: run.errors, statuses: run.statuses, p99MsByOperation: run.p99ByOperation },
      rssMb: { start, end, min: Math.min(...rss), max: Math.max(...rss), growthPercent: growth, note: 'start/end: medians of the first and last 10 one-second samples' },
      eventLoopDelayP99Ms: { max: Math.max(...samples.map((x) => x.lagP99Ms)), note: 'prom-client nodejs_eventloop_lag_p99_seconds per 10 s; includes its 10 ms sampling resolution (idle reads 10-14 ms)' },
      samples,
      serverSideByOperation: perOperation,
    };
    writeFileSync(join(dir, 'soak.json'), JSON.stringify(report, null, 2));
    say(JSON.stringify(report, null, 2));
    const problems = [run.errors > 0 && `${run.errors} errors`, run.p99 >= P99_LIMIT_MS && `p99 ${run.p99} ms >= ${P99_LIMIT_MS} ms`, growth >= 10 && `RSS grew ${growth}%`].filter(Boolean);
    say(problems.length ? `soak: FAILED (${problems.join(', ')}); report and service log kept in ${dir}` : 'soak: passed');
    process.exitCode = problems.length ? 1 : 0;
  } finally {
    await svc.stop();
    if (svc.child.exitCode !== 0) {
      say(`soak: the service exited ${svc.child.exitCode ?? svc.child.signalCode} on SIGTERM`);
      process.exitCode = 1;
    }
    await up.close();
    if (process.exitCode === 0) rmSync(dir, { recursive: true, force: true });
  }
}

runBench('soak', main);
