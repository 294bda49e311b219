// Soak (make soak): the built service (node dist/src/main.js) under 60 s of mixed traffic on loopback at the highest
// rate that keeps p99 under 50 ms (found by a short ramp), against local upstreams (DNS, range API, TLS with a test CA,
// MaxMind test databases). Reports throughput, errors (must be 0), RSS start/end (growth < 10%), event-loop delay p99.
import http from 'node:http';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUpstreams, validRequests, type OperationRequest } from '../test/faults/fixtures.js';
import { GEOIP_TEST_ASN_DB, GEOIP_TEST_CITY_DB } from '../test/fixtures/paths.js';
import { percentile, round } from './load.js';
import { createKey, ROOT, rssMb, scrapeMetrics, startService } from './processes.js';
import { HIGH_LIMITS } from './service-env.js';

// The soak finds the highest rate the service holds on the whole host: nothing pinned (bench/cpu-usage.ts).
process.env.BENCH_PIN ??= '0';

/** For investigations: SOAK_SECONDS, SOAK_RATE (skips the ramp), SOAK_SKIP=operationId,... (leaves operations out). */
const SOAK_S = Number(process.env.SOAK_SECONDS ?? 60);
const STEP_S = 10;
const P99_LIMIT_MS = 50;
/** Ramp targets (requests/s): stop at the first that misses p99, errors, or cannot be delivered. */
const RAMP = [50, 100, 200, 300, 450, 650, 900, 1300, 1800, 2500, 3500, 5000];

interface Run {
  target: number;
  rps: number;
  p50: number;
  p99: number;
  responses: number;
  /** Answers other than 200, connection errors and timeouts. */
  errors: number;
  statuses: Record<string, number>;
  /** Client-side p99 (ms) per operation. */
  p99ByOperation: Record<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One scrape of /metrics: event-loop delay p99 since the last scrape (prom-client resets it), and JS heap figures. */
async function scrape(url: string): Promise<{ lagP99Ms: number; heapUsedMb: number; externalMb: number }> {
  const { metric } = await scrapeMetrics(url);
  return {
    lagP99Ms: round(metric('nodejs_eventloop_lag_p99_seconds') * 1000, 2),
    heapUsedMb: round(metric('nodejs_heap_size_used_bytes') / 2 ** 20),
    externalMb: round(metric('nodejs_external_memory_bytes') / 2 ** 20),
  };
}

/** Cumulative server-side latency buckets per operation (200 answers), from /metrics: operationId -> le -> count. */
async function serverBuckets(url: string): Promise<Map<string, Map<number, number>>> {
  const { text } = await scrapeMetrics(url);
  const out = new Map<string, Map<number, number>>();
  for (const m of text.matchAll(/^http_request_duration_seconds_bucket\{le="([^"]+)",operationId="([^"]+)",status="200"\} (\d+)$/gm)) {
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    if (!out.has(m[2])) out.set(m[2], new Map());
    out.get(m[2])!.set(le, Number(m[3]));
  }
  return out;
}

/** Per operation over a window (after minus before): requests and the bucket bound under which 99% were answered. */
function serverP99(before: Map<string, Map<number, number>>, after: Map<string, Map<number, number>>): Record<string, { requests: number; p99UpToMs: number }> {
  const out: Record<string, { requests: number; p99UpToMs: number }> = {};
  for (const [op, buckets] of after) {
    const les = [...buckets.keys()].sort((a, b) => a - b);
    const count = (le: number) => buckets.get(le)! - (before.get(op)?.get(le) ?? 0);
    const total = count(Infinity);
    if (total === 0) continue;
    const le = les.find((l) => count(l) >= 0.99 * total) ?? Infinity;
    out[op] = { requests: total, p99UpToMs: le === Infinity ? Infinity : le * 1000 };
  }
  return out;
}

/**
 * One open-loop run: `target` requests/s spread evenly over `seconds` (each sent when due, whether or not earlier
 * ones were answered), cycling through `requests`, over keep-alive connections. Latency is send to last byte.
 * (autocannon's rate option fires each connection's quota at the start of every second: bursts, not a rate.)
 */
async function load(url: string, requests: OperationRequest[], key: string, target: number, seconds: number): Promise<Run> {
  const { hostname, port } = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const total = Math.round(target * seconds);
  const times = new Float64Array(total);
  const statuses: Record<string, number> = {};
  const byOperation = new Map<string, number[]>();
  let n = 0;
  let errors = 0;
  let sent = 0;
  let pending = 0;
  const started = performance.now();
  let finished = started;
  await new Promise<void>((resolve) => {
    const done = () => {
      pending--;
      if (sent === total && pending === 0) {
        finished = performance.now();
        resolve();
      }
    };
    const fire = (r: OperationRequest) => {
      const t0 = performance.now();
      pending++;
      const req = http.request({ agent, host: hostname, port, method: r.method, path: r.path, headers: { ...r.headers, 'x-api-key': key } }, (res) => {
        res.resume();
        res.on('end', () => {
          statuses[String(res.statusCode)] = (statuses[String(res.statusCode)] ?? 0) + 1;
          if (res.statusCode === 200) {
            const ms = performance.now() - t0;
            times[n++] = ms;
            if (!byOperation.has(r.operationId)) byOperation.set(r.operationId, []);
            byOperation.get(r.operationId)!.push(ms);
          } else errors++;
          done();
        });
      });
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        statuses.error = (statuses.error ?? 0) + 1;
        errors++;
        done();
      });
      req.end(r.body);
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * target) + 1);
      while (sent < due) fire(requests[sent++ % requests.length]);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  const sorted = times.subarray(0, n).sort();
  const elapsed = (finished - started) / 1000;
  const p99ByOperation = Object.fromEntries([...byOperation].map(([op, ts]) => [op, round(percentile(Float64Array.from(ts).sort(), 0.99), 2)]));
  return { target, rps: round((n + errors) / elapsed), p50: round(percentile(sorted, 0.5), 2), p99: round(percentile(sorted, 0.99), 2), responses: n + errors, errors, statuses, p99ByOperation };
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist/src/main.js'))) throw new Error('dist/src/main.js is missing: run `make soak` (it builds first)');
  const dir = mkdtempSync(join(tmpdir(), 'vls-soak-'));
  const up = await startUpstreams();
  const env = {
      ...up.env,
      DATA_DIR: dir,
      GEOIP_CITY_DB: GEOIP_TEST_CITY_DB,
      GEOIP_ASN_DB: GEOIP_TEST_ASN_DB,
      ...HIGH_LIMITS,
      TRUST_PROXY: 'true',
      LOG_LEVEL: 'info',
  };
  const key = await createKey('soak', env, dir);
  const { child, url } = await startService({ name: 'service', env, dir });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    // Every operation, each answered 200: the own-IP lookup through X-Forwarded-For (TRUST_PROXY).
    // One request per operation, equally weighted.
    const requests = validRequests()
      .map((r) => (r.operationId === 'lookupOwnIp' ? { ...r, headers: { 'x-forwarded-for': '81.2.69.142' } } : r))
      .filter((r) => !process.env.SOAK_SKIP || !process.env.SOAK_SKIP.split(',').includes(r.operationId));
    // Warm-up, concurrent so that every password worker thread loads its dictionaries; every answer must be 200.
    for (let pass = 0; pass < 3; pass++) {
      await Promise.all(
        Array.from({ length: 4 }, () => requests).flat().map(async (r) => {
          const res = await fetch(url + r.path, { method: r.method, headers: { ...r.headers, 'x-api-key': key }, body: r.body });
          if (res.status !== 200) throw new Error(`${r.operationId} answers ${res.status}: ${(await res.text()).slice(0, 200)}`);
          await res.arrayBuffer();
        }),
      );
    }
    await load(url, requests, key, RAMP[0], STEP_S);
    process.stdout.write(`soak: ${requests.length} request kinds over ${new Set(requests.map((r) => r.operationId)).size} operations; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);

    const ramp: Run[] = [];
    let chosen: Run | null = null;
    const fails = (run: Run) => run.p99 >= P99_LIMIT_MS || run.errors > 0 || run.rps < 0.9 * run.target;
    // SOAK_RATE=N skips the ramp and soaks at N requests/s.
    const fixed = Number(process.env.SOAK_RATE ?? 0);
    ramping: for (const target of fixed > 0 ? [] : RAMP) {
      // A step that misses is tried twice more: one noisy moment on a shared machine should not end the ramp.
      for (let attempt = 0; attempt < 3; attempt++) {
        const run = await load(url, requests, key, target, STEP_S);
        ramp.push(run);
        process.stdout.write(`ramp ${target}/s: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, errors ${run.errors}\n`);
        if (!fails(run)) {
          chosen = run;
          continue ramping;
        }
      }
      break;
    }
    // Soak at 80% of the edge found (confirmed below), so noise on a shared machine does not tip it over; when even
    // the first step misses, soak at it anyway and report the figures.
    if (!chosen && !fixed) process.stdout.write(`soak: even ${RAMP[0]} req/s misses p99 < ${P99_LIMIT_MS} ms; soaking at ${RAMP[0]} req/s\n`);
    let rate = fixed > 0 ? fixed : chosen ? Math.round(chosen.target * 0.8) : RAMP[0];
    // A 10 s step can pass where a minute does not: confirm the rate over 20 s, stepping down by 20% (at most twice).
    for (let attempt = 0; !fixed && chosen && attempt < 3; attempt++) {
      const confirm = await load(url, requests, key, rate, 20);
      ramp.push(confirm);
      process.stdout.write(`confirm ${rate}/s: ${confirm.rps} req/s, p50 ${confirm.p50} ms, p99 ${confirm.p99} ms, errors ${confirm.errors}\n`);
      if (!fails(confirm) || attempt === 2) break;
      rate = Math.round(rate * 0.8);
    }
    await scrape(url); // resets the event-loop delay histogram
    await sleep(1000);
    // RSS every second (the password worker threads make it swing by ~100 MB between garbage collections, so start
    // and end are medians of the first and last 10 s); /metrics every 10 s.
    const rss: number[] = [];
    const samples: Array<{ s: number; rssMb: number; heapUsedMb: number; externalMb: number; lagP99Ms: number }> = [];
    const soakStarted = Date.now();
    const rssSampler = setInterval(() => rss.push(round(rssMb(child.pid!))), 1000);
    const sampler = setInterval(
      () => void scrape(url).then((m) => samples.push({ s: Math.round((Date.now() - soakStarted) / 1000), rssMb: rss[rss.length - 1], ...m })),
      10_000,
    );
    const bucketsBefore = await serverBuckets(url);
    const soak = await load(url, requests, key, rate, SOAK_S);
    clearInterval(sampler);
    clearInterval(rssSampler);
    const lags = samples.map((x) => x.lagP99Ms);
    const perOperation = serverP99(bucketsBefore, await serverBuckets(url));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const rssStart = median(rss.slice(0, 10));
    const rssEnd = median(rss.slice(-10));
    const growth = round(((rssEnd - rssStart) / rssStart) * 100);

    const report = {
      date: new Date().toISOString(),
      machine: { cpus: availableParallelism(), loadAverage: loadavg().map((l) => round(l, 2)) },
      ramp: ramp.map(({ target, rps, p99, errors }) => ({ target, rps, p99, errors })),
      soak: { seconds: SOAK_S, targetRate: rate, throughput: soak.rps, responses: soak.responses, p50Ms: soak.p50, p99Ms: soak.p99, errors: soak.errors, statuses: soak.statuses, p99MsByOperation: soak.p99ByOperation },
      rssMb: { start: rssStart, end: rssEnd, min: Math.min(...rss), max: Math.max(...rss), growthPercent: growth, note: 'start/end: medians of the first and last 10 one-second samples' },
      eventLoopDelayP99Ms: { max: Math.max(...lags), note: 'prom-client nodejs_eventloop_lag_p99_seconds per 10 s; includes its 10 ms sampling resolution (idle reads 10-14 ms)' },
      samples,
      serverSideByOperation: perOperation,
    };
    writeFileSync(join(dir, 'soak.json'), JSON.stringify(report, null, 2));
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    const problems = [
      soak.errors > 0 ? `${soak.errors} errors` : '',
      soak.p99 >= P99_LIMIT_MS ? `p99 ${soak.p99} ms >= ${P99_LIMIT_MS} ms` : '',
      growth >= 10 ? `RSS grew ${growth}%` : '',
    ].filter(Boolean);
    process.stdout.write(problems.length ? `soak: FAILED (${problems.join(', ')}); report and service log kept in ${dir}\n` : 'soak: passed\n');
    process.exitCode = problems.length ? 1 : 0;
  } finally {
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) {
      process.stdout.write(`soak: the service exited ${code} on SIGTERM\n`);
      process.exitCode = 1;
    }
    await up.close();
    if (process.exitCode === 0) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`soak: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
