// CPU profiles of the service under load, one service process per endpoint (node --cpu-prof), summarised per endpoint.
// Run (after `npx tsc -p tsconfig.build.json`):
//   node --import tsx bench/profile.ts [bic iban ... | koa http] [--duration 5] [--warmup 5] [--connections 32] [--top 10] [--limits-off] [--redis-url redis://...]
// (default: every service endpoint; koa and http profile the baselines for comparison)
// Profiles land in bench/results/profiles/<endpoint>/ (main thread CPU.*.<pid>.0.*.cpuprofile, worker threads beside it);
// only the samples of the measured load window count (start-up, warm-up and shutdown are left out).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatSummary, summarise, type CpuProfile, type Summary } from './cpuprofile-top.js';
import { BREACHED, ENDPOINTS, PASSWORDS, endpoint, probe, requestsFor, type Endpoint } from './endpoints.js';
import { startFixtures } from './fixtures.js';
import { runLoad, warmUntilSteady } from './measure.js';
import { createKey, ROOT, startBaseline, startService, waitIdle } from './processes.js';
import { geoDatabases, serviceEnv } from './service-env.js';
import { profileZxcvbn } from './zxcvbn-per-call.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    top: { type: 'string', default: '10' },
    'limits-off': { type: 'boolean', default: false },
    'redis-url': { type: 'string' },
  },
});
const ids = positionals.length ? positionals : ENDPOINTS.map((e) => e.id);
const duration = Number(values.duration);
const connections = Number(values.connections);
const outRoot = join(ROOT, 'bench/results/profiles');
const dir = mkdtempSync(join(tmpdir(), 'vls-profile-'));
const fixtures = await startFixtures(dir, BREACHED);
const geo = geoDatabases();
const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);
const results: Record<string, { main: Summary; workers: Summary | null; files: string[]; window?: { from: number; to: number; requests: number } }> = {};

/** The stages of a request, for inclusive times: logging, metrics, auth, limits, request id, validation, handlers, writing. */
const STAGES = [
  'pino', 'sonic-boom', '@pinojs/redact', 'prom-client', 'http/auth.js', 'accounts/limiter.js', 'local-counters.js', 'sqlite-counters.js',
  'redis-counters.js', 'randomUUID', 'http/openapi-router.js', 'http/api.js', 'openapi-backend', 'koa-body', 'http/json-body.js', 'src/operations/', 'src/domain/',
  'src/adapters/', 'dispatch', 'respond', 'writev',
];
const BASELINES: Record<string, string> = { koa: 'baseline-koa.ts', http: 'baseline-http.ts' };
const BASELINE_ENDPOINT: Endpoint = { id: 'baseline', label: 'baseline', method: 'GET', path: '/', auth: false, check: () => null };

for (const id of ids) {
  const e = BASELINES[id] ? { ...BASELINE_ENDPOINT, id, label: `bare ${id} (baseline)` } : endpoint(id);
  const out = join(outRoot, id + (values['limits-off'] ? '-limits-off' : '') + (values['redis-url'] ? '-redis' : ''));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const env = {
    ...serviceEnv(fixtures, mkdtempSync(join(dir, `${id}-`)), geo),
    ...(values['limits-off'] ? { RATE_LIMITS: 'off' } : {}),
    ...(values['redis-url'] ? { REDIS_URL: values['redis-url'] } : {}),
  };
  const nodeArgs = ['--cpu-prof', '--cpu-prof-dir', out];
  const key = BASELINES[id] ? '' : await createKey(`profile-${id}`, env, dir);
  const svc = BASELINES[id]
    ? await startBaseline(id, BASELINES[id], dir, nodeArgs)
    : await startService({ name: `profile-${id}`, env, dir, nodeArgs });
  try {
    const p = await probe(svc.url, e, key);
    if (!p.ok) throw new Error(`${id}: probe answered ${p.problem}`);
    const requests = requestsFor(e, key);
    await waitIdle(svc.pid, 15);
    const w = await warmUntilSteady(svc.url, requests, requests, connections, Number(values.warmup));
    process.stderr.write(`${id}: warm-up ${w.seconds.toFixed(1)} s (req/s per second: ${w.rounds.join(', ')})\n`);
    const from = nowUs();
    const m = await runLoad({ url: svc.url, requests, connections, durationS: duration });
    const to = nowUs();
    process.stderr.write(`${id}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, non-2xx ${m.non2xx}\n`);
    await svc.stop();
    const files = readdirSync(out).filter((f) => f.endsWith('.cpuprofile'));
    const load = (f: string) => JSON.parse(readFileSync(join(out, f), 'utf8')) as CpuProfile;
    // File names: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main thread.
    const isMain = (f: string) => f.split('.')[4] === '0';
    const opts = { from, to, top: Number(values.top), inclusive: STAGES };
    const main = summarise(files.filter(isMain).map(load), opts);
    const workerFiles = files.filter((f) => !isMain(f));
    const workers = workerFiles.length ? summarise(workerFiles.map(load), opts) : null; // tsx's loader thread is idle
    results[id] = { main, workers, files: files.map((f) => join(out, f)), window: { from, to, requests: Math.round(m.rps * (to - from) / 1e6) } };
    const perRequest = ((main.busyMs * 1000) / results[id].window!.requests).toFixed(1);
    process.stdout.write(`\n=== ${e.label} (${id}): main thread, ${perRequest} us busy per request\n${formatSummary(main)}\n`);
    if (workers && workers.busyMs > workers.windowMs * 0.05) process.stdout.write(`--- ${id}: worker threads (${workerFiles.length})\n${formatSummary(workers)}\n`);
    if (id === 'password') {
      const zx = summarise([await profileZxcvbn(PASSWORDS)], { top: Number(values.top), inclusive: ['matcher/dictionary', 'l33t', 'scoring', 'Matching.cjs'] });
      results['password-zxcvbn'] = { main: zx, workers: null, files: [] };
      process.stdout.write(`--- password: zxcvbn estimates in-process (what the worker threads run)\n${formatSummary(zx)}\n`);
    }
  } catch (err) {
    process.stderr.write(`${id}: ${(err as Error).message}\n`);
  } finally {
    await svc.stop();
  }
}

await fixtures.close();
mkdirSync(outRoot, { recursive: true });
writeFileSync(join(outRoot, 'summary.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`\nwritten: bench/results/profiles/summary.json\n`);
rmSync(dir, { recursive: true, force: true });
