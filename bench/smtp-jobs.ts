// Verification jobs at scale (issue #56, "Performance"): one job of BENCH_JOB_ITEMS addresses over BENCH_JOB_DOMAINS
// fixture domains (their MX names on BENCH_JOB_SERVERS loopback addresses, 20 ms per RCPT, 5% greylisted once), on one
// service plus two `job-worker` processes with redis-server, then on the embedded SQLite queue (the service alone);
// GET /api/v1/bic/DEUTDEFF as an open loop beside it, against the same load idle. Settings: bench/README.md.
//   make build && node --import tsx bench/smtp-jobs.ts          (make bench-jobs)
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedis } from './fixtures.js';
import { median, round, type Measured } from './load.js';
import { PeakRss, ROOT, rssMb, startService, waitIdle, type Proc } from './processes.js';
import { num } from './session.js';
import { startSmtpBench } from './smtp-setup.js';
import { settled } from './timed-load.js';
import { runBench } from './children.js';

const ITEMS = num('BENCH_JOB_ITEMS', 100_000);
const DOMAINS = Math.max(1, num('BENCH_JOB_DOMAINS', 1000));
const SERVERS = Math.max(1, Math.min(2000, num('BENCH_JOB_SERVERS', 100)));
const QUEUES = (process.env.BENCH_JOB_QUEUES ?? 'redis,sqlite').split(',');
const BIC = { rate: num('BENCH_BIC_RATE', 500), connections: num('BENCH_CONNECTIONS', 16) };
/** Seconds of each BIC window, idle (two) and during the job (as many as it lasts). */
const WINDOW_S = num('BENCH_DURATION', 5);
/** Seconds without a new result line after which the job counts as stalled (the run ends and says so). */
const STALL_S = num('BENCH_JOB_STALL', 30);

const domain = (d: number) => `d${d}.jobs.test`;
const serverIp = (d: number) => `127.0.${3 + Math.floor((d % SERVERS) / 200)}.${10 + ((d % SERVERS) % 200)}`;
/** Address i: `a<i>` at domain i % DOMAINS; one in ten unknown (550 5.1.1), one in twenty greylisted once. */
const address = (i: number) => `a${i}@${domain(i % DOMAINS)}`;
const n = (local: string) => (/^a\d+$/.test(local) ? Number(local.slice(1)) : -1);

type Job = { status: string; processed: number; total: number; [k: string]: unknown };

/** INFO memory's used_memory, MB (null without Redis). */
async function redisMb(url: string | undefined): Promise<number | null> {
  if (!url) return null;
  const client = new Redis(url);
  const info = await client.info('memory');
  client.disconnect();
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1]) / 2 ** 20;
}

/** Each process's peak RSS (the kernel's high-water mark, processes.ts) from now until stopped; sampled every 0.5 s where the mark cannot be reset. */
function rssPeaks(procs: Proc[]): { stop(): Record<string, number> } {
  const marks = procs.map((p) => new PeakRss(p.pid));
  marks.forEach((m) => m.start());
  const sampled: number[] = procs.map(() => 0);
  const timer = setInterval(() => procs.forEach((p, i) => (sampled[i] = Math.max(sampled[i], rssMb(p.pid)))), 500);
  return { stop: () => (clearInterval(timer), Object.fromEntries(procs.map((p, i) => [p.name, marks[i].stop() ?? sampled[i]]))) };
}

/** Milliseconds from `t0` until the results answer their first line (null: none before the job ended); the first lines then. */
async function firstLines(url: string, headers: Record<string, string>, t0: number, over: () => boolean) {
  for (; !over(); await new Promise((r) => setTimeout(r, 20))) {
    const text = await (await fetch(url, { headers })).text();
    if (text.includes('\n')) return { ms: round(performance.now() - t0), lines: text.split('\n').slice(0, 3) };
  }
  return { ms: null, lines: [] };
}

/** One queue: fixtures, service (and workers), idle figures, the job with BIC beside it, then the job's figures. */
async function bench(queue: string) {
  const redis = queue === 'redis' ? await startRedis() : null;
  const env = { RATE_LIMITS: 'off', LOG_LEVEL: 'warn', JOBS_RETRY_DELAYS: '1s,1s,1s', JOBS_MAX_ITEMS: String(Math.max(ITEMS, 100_000)), ...(redis ? { REDIS_URL: redis.url, JOBS_WORKER: 'off' } : {}) };
  const b = await startSmtpBench({
    name: `jobs-${queue}`, domains: DOMAINS, domain, ip: serverIp, rcptDelayMs: 20, env, bic: BIC,
    accepts: (local) => n(local) >= 0 && n(local) % 10 !== 9,
    greylistOnce: (local) => n(local) % 20 === 7,
  });
  const start = (i: number) => startService({ name: `job-worker-${i}`, env: b.env, dir: b.dir, main: join(ROOT, 'dist/src/job-worker.js'), nodeArgs: ['--max-semi-space-size=8', '--max-old-space-size=96'], portVar: 'METRICS_PORT', ready: { path: '/metrics' } });
  const procs = [b.svc, ...(redis ? await Promise.all([1, 2].map(start)) : [])];
  let keep = true; // the logs and the store stay (named on stderr) unless the job ended well
  try {
    await Promise.all(procs.map((p) => waitIdle(p.pid, 15)));
    await b.load(1); // warm-up
    const idle = [await b.load(WINDOW_S), await b.load(WINDOW_S)];
    const idleRss = Object.fromEntries(procs.map((p) => [p.name, rssMb(p.pid)]));
    const redisBefore = await redisMb(redis?.url);
    const run = await runJob(b.svc.url, b.key, b.load, procs);
    keep = run.stalled || run.job.status !== 'completed';
    const redisAfter = await redisMb(redis?.url);
    const p99 = (ms: Measured[]) => round(median(ms.map((m) => m.p99)), 2);
    const rssAboveIdleMb = Object.fromEntries(procs.map((p): [string, number] => [p.name, round(run.peaks[p.name] - idleRss[p.name])]));
    return {
      queue, processes: procs.map((p) => p.name), items: ITEMS, stalled: run.stalled, seconds: run.seconds, itemsPerSecond: round(run.job.processed / run.seconds),
      firstResultLineMs: run.first.ms,
      smtp: b.figures(),
      rssAboveIdleMb,
      idleRssMb: Object.fromEntries(Object.entries(idleRss).map(([k, v]) => [k, round(v)])),
      redisMb: redisBefore === null ? null : { before: round(redisBefore, 2), after: round(redisAfter!, 2), per100kItems: round(((redisAfter! - redisBefore) / ITEMS) * 100_000, 2) },
      bic: { idleP99: p99(idle), duringP99: p99(run.bic), windows: run.bic.map((m) => round(m.p99, 2)), ratio: round(p99(run.bic) / p99(idle), 3), non2xx: [...idle, ...run.bic].reduce((a, m) => a + m.non2xx + m.errors, 0) },
      job: run.job, firstLines: run.first.lines,
      targets: { rssUnder50MbAboveIdle: Object.values(rssAboveIdleMb).every((v) => v < 50) ? 'met' : 'MISSED', bicP99Within20Percent: p99(run.bic) <= 1.2 * p99(idle) ? 'met' : 'MISSED' },
    };
  } finally {
    await Promise.all(procs.slice(1).map((p) => p.stop()));
    await b.close();
    await redis?.stop();
    if (keep) process.stderr.write(`smtp-jobs: ${queue}: logs and data kept in ${b.dir}\n`);
    else rmSync(b.dir, { recursive: true, force: true });
  }
}

/** Submits the job; polls its status every second until it ends, BIC windows and RSS samples meanwhile. */
async function runJob(url: string, key: string, load: (s: number) => Promise<Measured>, procs: Proc[]) {
  const headers = { 'x-api-key': key };
  const peaks = rssPeaks(procs);
  const items = Array.from({ length: ITEMS }, (_, i) => address(i));
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/email/jobs`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ items, smtp: true }) });
  const created = (await res.json()) as Job & { id: string };
  if (res.status !== 202) throw new Error(`the job answered ${res.status}: ${JSON.stringify(created)}`);
  const ended = (async () => {
    let moved = { processed: -1, at: t0 };
    for (;;) {
      const job = (await (await fetch(`${url}/api/v1/email/jobs/${created.id}`, { headers })).json()) as Job;
      const s = round((performance.now() - t0) / 1000, 2);
      if (job.processed !== moved.processed) moved = { processed: job.processed, at: performance.now() };
      // A job whose lines stop coming for STALL_S ends the run: its figures so far, and the status object says where it stopped.
      const stalled = performance.now() - moved.at > STALL_S * 1000;
      if (!['queued', 'running'].includes(job.status) || stalled) return { job, stalled, seconds: stalled ? round((moved.at - t0) / 1000, 2) : s };
      process.stderr.write(`[jobs ${s} s] ${job.status}: ${job.processed}/${job.total}\n`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const over = settled(ended);
  const first = firstLines(`${url}/api/v1/email/jobs/${created.id}/results`, headers, t0, over);
  const bic: Measured[] = [];
  while (!over()) bic.push(await load(WINDOW_S)); // BIC windows, one after the other, until the job ends
  return { ...(await ended), first: await first, bic, peaks: peaks.stop() };
}

async function main(): Promise<void> {
  const results = [];
  for (const queue of QUEUES) results.push(await bench(queue));
  console.log(JSON.stringify(results, null, 2));
}

runBench('smtp-jobs', main);
