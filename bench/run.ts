// `make bench`: the fixed bench (bare Koa, node:http, the Fastify peer and the service's BIC, IBAN, card and IP in turn,
// five rounds, with wrk and again with autocannon), then the other endpoints alone and the limit/worker pairs.
// Settings: bench/README.md. Method and current figures: BENCHMARKS.md.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { BREACHED, ENDPOINTS, endpoint, probe, requestsFor } from './endpoints.js';
import { redisBinaryPresent, startFixtures, startRedis } from './fixtures.js';
import { median, runLoad, wrkPresent, type Loader } from './load.js';
import { PeakRss, ROOT, waitIdle, type Proc } from './processes.js';
import { evaluateTargets, formatRotations, formatTable, formatTargets } from './report.js';
import { geoDatabases, serviceEnv } from './service-env.js';
import { elapsedS, log, ratioOf, Session, settings, toRow, type Launched, type Side } from './session.js';
import { cpuPlan, hostLine } from './cpu-usage.js';

if (!existsSync(join(ROOT, 'dist/src/main.js'))) {
  process.stderr.write('dist/src/main.js is missing: build first (npx tsc -p tsconfig.build.json, or make bench)\n');
  process.exit(2);
}
const { connections, durationS, bicRate } = settings;
const run = new Session();
const { rows } = run;
const dir = mkdtempSync(join(tmpdir(), 'vls-bench-'));
const plan = cpuPlan();
log(hostLine());
const loaders: Loader[] = ((process.env.BENCH_LOADERS ?? (wrkPresent() ? 'wrk,autocannon' : 'autocannon')).split(',') as Loader[]).filter(Boolean);
const fixtures = await startFixtures(BREACHED);
const geo = geoDatabases();
const env = (name: string, extra: Record<string, string> = {}) => ({ ...serviceEnv(fixtures, mkdtempSync(join(dir, `${name}-`)), geo), ...extra });
/** The fixed bench's other servers (baselines, peer, another build), stopped after it; the main service stays. */
const others: Proc[] = [];

// ---- 1. the fixed bench: every side warm, in turn, five rounds (session.ts, rotate), once per load generator
const FIXED = ['koa', 'http', 'fastify-peer', 'bic', 'iban', 'card', 'ip'];
const PEER_KEY = 'vls_bench_peer_key';
const baselines: Array<[string, string, string, Record<string, string>, string | null]> = [
  ['koa', 'bare Koa (baseline)', 'baselines.ts', { BASELINE: 'koa' }, null],
  ['http', 'bare node:http (baseline)', 'baselines.ts', { BASELINE: 'http' }, null],
  ['fastify-peer', 'Fastify peer, BIC', 'fastify-peer.ts', { PEER_API_KEY: PEER_KEY }, PEER_KEY],
];
const sides: Side[] = [];
for (const [id, label, script, extra, key] of baselines) {
  // Started, probed and warmed on BIC as a service is (a baseline answers its one body on every path, keys aside).
  const l = run.wanted(id) ? await run.launch({ name: id, env: extra, dir, script, ready: { path: '/' } }, label, [[id, label]], { key: key ?? '' }) : null;
  if (!l) continue;
  others.push(l.svc);
  sides.push({ id, label, url: l.svc.url, requests: key ? requestsFor(endpoint('bic'), key) : [{ method: 'GET', path: '/', headers: {} }], pid: l.svc.pid });
}
const mainIds = ENDPOINTS.map((e): [string, string] => [e.id, e.label]).filter(([id]) => run.wanted(id));
const CONCURRENT: Array<[string, string]> = [['password-concurrent', 'password, concurrent with ↓'], ['bic-under-password', 'BIC while password saturated']];
const usesPool = (id: string) => id.startsWith('password');
const main = await run.launch({ name: 'service', env: env('main'), dir }, 'BIC', [...mainIds, ...CONCURRENT], { mixed: mainIds.map(([id]) => id).filter((id) => !usesPool(id)) });
const limitsOn = main ? (await probe(main.svc.url, endpoint('bic'), main.key)).headers.has('ratelimit-limit') : null;
const serviceSide = (l: Launched, id: string): Side => ({ id, label: endpoint(id).label, url: l.svc.url, requests: requestsFor(endpoint(id), l.key), pid: l.svc.pid });
if (main) for (const id of FIXED.filter((i) => run.wanted(i) && !baselines.some(([b]) => b === i))) sides.push(serviceSide(main, id));
// BENCH_BASE=DIR: another build's rows (BENCH_BASE_ROWS, default bic) join the rotation as `<row>-base`, to judge a
// change by CPU per answer and req/s against the code before it (DIR/dist/src/main.js, node_modules from DIR upwards).
const baseRows = (process.env.BENCH_BASE_ROWS ?? 'bic').split(',').map((s) => s.trim()).filter(Boolean);
const base = process.env.BENCH_BASE ? await run.launch({ name: 'service-base', env: env('base'), dir, main: join(process.env.BENCH_BASE, 'dist/src/main.js') }, 'BENCH_BASE build', baseRows.map((id) => [`${id}-base`, `${endpoint(id).label}, BENCH_BASE build`])) : null;
if (base) for (const id of baseRows) sides.push({ ...serviceSide(base, id), id: `${id}-base`, label: `${endpoint(id).label}, BENCH_BASE build` });
if (base) others.push(base.svc);
const fixedRuns = new Map<Loader, ReturnType<typeof ratioOf>>();
const peerLines: string[] = [];
for (const loader of sides.length > 1 ? loaders : []) {
  log(`the fixed bench with ${loader}: ${sides.map((s) => s.id).join(', ')} in turn, ${settings.rounds} rounds of ${settings.warmupS} s warm-up + ${durationS} s`);
  const rotation = await run.rotate(`fixed bench`, sides, { loader });
  fixedRuns.set(loader, ratioOf(rotation, 'bic', 'fastify-peer'));
  const mid = (f: (sl: (typeof rotation.slices)[0][0]) => number) => median(rotation.slices.flat().map(f));
  const [loaderBusy, serverBusy] = [mid((sl) => sl.loaderBusyPct), mid((sl) => sl.serverBusyPct)];
  const why = loaderBusy > 90 ? ': the generator set the pace' : serverBusy < 90 ? ': the servers did not get their CPU (a busy host)' : '';
  peerLines.push(`${loader}: the servers used ${serverBusy.toFixed(0)}% of a CPU, the generator ${loaderBusy.toFixed(0)}% (medians)${why ? `${why}; req/s ratios are not to be judged, CPU per answer is` : ''}`);
  const versus = (id: string, y: string, what: string, digits: number) => {
    const r = ratioOf(rotation, id, y);
    if (r) peerLines.push(`${loader}: ${id} vs ${what} ${r.ratio.toFixed(digits)}x req/s (rounds ${r.rounds.map((v) => v.toFixed(2)).join(', ')}), ${r.cpu.toFixed(digits)}x its CPU per answer`);
  };
  for (const id of base ? baseRows : []) versus(id, `${id}-base`, 'the BENCH_BASE build', 3);
  for (const id of ['bic', 'iban', 'card', 'ip']) versus(id, 'fastify-peer', "the peer's BIC", 2);
  if (loader !== loaders[0]) continue;
  sides.forEach((s, i) => rows.push(toRow(s, rotation.slices[i], null, s.id === 'fastify-peer' ? ['Fastify 5 defaults + fastify-openapi-glue on openapi.yaml, SHA-256 key hook, @fastify/rate-limit, pino at info on stdout (to a file)'] : [])));
}
if (sides.length === 1) rows.push(await run.measure(sides[0])); // one side wanted: measured alone
for (const p of others) await p.stop();

// ---- 2. the other endpoints alone on the same service (warm-up discarded, one window), the password pool last
const upstream = (id: string): (() => string) | null => {
  const count = id === 'dns' || id === 'email' ? () => fixtures.dns.queries.length : usesPool(id) ? () => fixtures.range.requests.length : id === 'tls' ? fixtures.tls.connections : null;
  if (!count) return null;
  const before = count();
  return () => `${count() - before} upstream requests during warm-up + run`;
};
const single = mainIds.filter(([id]) => !FIXED.includes(id));
for (const [id, label] of [...single.filter(([i]) => !usesPool(i)), ...single.filter(([i]) => usesPool(i))]) {
  if (!main) break;
  const p = await probe(main.svc.url, endpoint(id), main.key);
  if (!p.ok) {
    run.mark(id, label, 'failed', `probe answered ${p.problem}`);
    continue;
  }
  if (usesPool(id)) await waitIdle(main.svc.pid, 15); // the pool started on the probe
  const counted = upstream(id);
  const row = await run.measure(serviceSide(main, id), p.problem ? [`WARNING ${p.problem}`] : []);
  if (counted) row.note = [row.note, counted()].filter(Boolean).join('; ');
  rows.push(row);
  if (id !== 'password' || !run.wanted('bic-under-password')) continue;
  // The password endpoint saturated (closed loop) and BIC beside it as an open loop: event-loop latency, not a CPU fight.
  log(`password saturated + BIC at ${bicRate}/s, ${durationS} s`);
  const rss = new PeakRss(main.svc.pid);
  rss.start();
  const [pw, bic] = await Promise.all([
    runLoad({ url: main.svc.url, requests: requestsFor(endpoint('password'), main.key), connections, durationS }),
    runLoad({ url: main.svc.url, requests: requestsFor(endpoint('bic'), main.key), connections, durationS, overallRate: bicRate, loader: 'paced' }),
  ]);
  const peak = rss.stop();
  const asSlice = (m: typeof pw) => [{ ...m, cpuUsPerReq: NaN, loaderUsPerReq: NaN, loaderBusyPct: NaN, serverBusyPct: NaN, othersCpuS: 0, stealPct: NaN, busyPct: NaN, load1: NaN }];
  rows.push(toRow({ ...serviceSide(main, 'password'), id: CONCURRENT[0][0], label: CONCURRENT[0][1] }, asSlice(pw), peak, []));
  rows.push(toRow({ ...serviceSide(main, 'bic'), id: CONCURRENT[1][0], label: CONCURRENT[1][1] }, asSlice(bic), peak, [`open loop at ${bicRate} req/s, evenly paced; target p99 < 25 ms`]));
}
await main?.svc.stop();

// ---- 3. BIC variants, each in turn with the service it is compared to (both started fresh)
const STOCK: [string, string] = ['bic-stock-router', 'BIC, openapi-backend stock router'];
if (run.wanted(STOCK[0])) {
  const stock = await run.launch({ name: 'service-stock-router', env: env('stock'), dir, script: 'stock-router-service.ts' }, STOCK[1], [STOCK]);
  if (stock) rows.push(await run.measure({ ...serviceSide(stock, 'bic'), id: STOCK[0], label: STOCK[1] }, ['same service, router left as openapi-backend builds it']));
  await stock?.svc.stop();
}
const OFF: [string, string] = ['bic-limits-off', 'BIC, limits off'];
const REDIS: [string, string] = ['bic-redis', 'BIC, limits on, Redis'];
const W2: [string, string] = ['bic-workers-2', 'BIC, WORKERS=2, Redis'];
const needOff = run.wanted(OFF[0]) || run.wanted(REDIS[0]);
const off = needOff ? await run.launch({ name: 'service-limits-off', env: env('off', { RATE_LIMITS: 'off' }), dir }, OFF[1], [OFF, REDIS]) : null;
if (off && run.wanted(OFF[0])) {
  const on = await run.launch({ name: 'service-limits-on', env: env('on'), dir }, 'BIC, limits on (embedded)', [OFF]);
  if (on) await run.pair(OFF[0], off, on, ['RATE_LIMITS=off: the same service with no limiter; both started fresh']);
  await on?.svc.stop();
}
const redisWanted = run.wanted(REDIS[0]) || run.wanted(W2[0]);
if (redisWanted && !redisBinaryPresent()) run.mark(REDIS[0], REDIS[1], 'skipped', 'redis-server not installed (apt-get install -y redis-server)');
const redis = redisWanted && redisBinaryPresent() ? await startRedis() : null;
const red = redis ? await run.launch({ name: 'service-redis', env: env('redis', { REDIS_URL: redis.url }), dir }, REDIS[1], [REDIS, W2]) : null;
if (red && off && run.wanted(REDIS[0])) await run.pair(REDIS[0], red, off);
await off?.svc.stop();
const serverCpus = plan.server ? plan.server.split(',').reduce((n, part) => n + (part.includes('-') ? Number(part.split('-')[1]) - Number(part.split('-')[0]) + 1 : 1), 0) : cpus().length;
if (run.wanted(W2[0]) && serverCpus < 2) run.mark(W2[0], W2[1], 'skipped', `the servers have ${serverCpus} CPU (${plan.server}): two workers need two (BENCH_PIN=0 or a larger host)`);
else if (run.wanted(W2[0]) && red) {
  const w2 = await run.launch({ name: 'service-workers-2', env: env('workers', { WORKERS: '2', REDIS_URL: redis!.url }), dir, processes: 3 }, W2[1], [W2]);
  if (w2) await run.pair(W2[0], w2, red, ['RSS = primary + 2 workers']);
  await w2?.svc.stop();
}
await red?.svc.stop();
await redis?.stop();
await fixtures.close();

// ---- 4. report: the table, the rotations, the targets; bench/results/latest.{md,json}
const order = [...FIXED, ...ENDPOINTS.map((e) => e.id), ...CONCURRENT.map(([id]) => id), STOCK[0], OFF[0], REDIS[0], W2[0]];
rows.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
const fixed = run.rotations.find((r) => r.name === 'fixed bench' && r.loader === loaders[0]);
const ratio = (x: string, y: string): number | null => {
  const r = (fixed && ratioOf(fixed, x, y)) ?? run.rotations.map((rot) => ratioOf(rot, x, y)).find(Boolean);
  return r?.ratio ?? null;
};
const [w, a] = [fixedRuns.get('wrk'), fixedRuns.get('autocannon')];
const targets = evaluateTargets(rows, ratio, w && a ? { wrk: w.ratio, autocannon: a.ratio } : null);
const failed = rows.some((r) => r.status === 'failed');
const cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
const header =
  `${cpus().length} CPU (${cpuModel}), ${Math.round(totalmem() / 2 ** 30)} GB, node ${process.version}; ${hostLine()}; ${connections} connections; ` +
  `${settings.rounds} rounds of ${settings.warmupS} s warm-up (discarded) + ${durationS} s per side; GeoIP ${geo.real ? 'GeoLite2' : 'MaxMind TEST databases'}; ` +
  `limits on: ${limitsOn ?? 'unknown'}; total ${elapsedS().toFixed(0)} s`;
const text = `${header}\n\n${formatTable(rows)}\n\nIn turn (medians over the rounds):\n${formatRotations(run.rotations)}\n${peerLines.join('\n')}\n\nTargets:\n${formatTargets(targets)}\n`;
process.stdout.write(`\n${text}`);
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const json = { date: new Date().toISOString(), header, settings, rotations: run.rotations, rows, targets, failed };
writeFileSync(join(ROOT, 'bench/results/latest.json'), `${JSON.stringify(json, null, 2)}\n`);
const md = `${json.date}: ${header}\n\n${formatTable(rows, true)}\n\n\`\`\`\n${formatRotations(run.rotations)}\n\`\`\`\n\n${formatTargets(targets, true)}\n`;
writeFileSync(join(ROOT, 'bench/results/latest.md'), md);
process.stdout.write(`\nwritten: bench/results/latest.json, bench/results/latest.md${failed ? '\nFAILED: a row had non-2xx answers, errors, or could not run' : ''}\n`);
if (failed) process.stdout.write(`service logs kept in ${dir}\n`);
else rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
