// `make bench`: bare Koa and node:http baselines, then the service per endpoint and in its variants; one table + JSON.
// Env: BENCH_DURATION (s per row, 5), BENCH_WARMUP (s per row, 0.5), BENCH_SERVICE_WARMUP (max s of load after a service
// start and idle, until BIC req/s is steady, 4), BENCH_BIC_RATE (BIC req/s beside the saturated password endpoint, 500),
// BENCH_CONNECTIONS (32), BENCH_PAIR_ROUNDS (alternating rounds of the limit and worker comparisons, 5), BENCH_ONLY (row ids, comma-separated, for short development runs).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { BREACHED, BULK_ITEMS, ENDPOINTS, PASSWORDS, endpoint, probe, requestsFor } from './endpoints.js';
import { redisBinaryPresent, startFixtures, startRedis, type BenchRedis } from './fixtures.js';
import { wrkPresent } from './wrk.js';
import { runLoadInChild } from './load-child.js';
import { runLoad, warmUntilSteady } from './measure.js';
import { PeakRss, ROOT, startBaseline, waitIdle, type Proc } from './processes.js';
import { addRatios, evaluateTargets, formatMarkdown, formatTable, formatTargets } from './report.js';
import { geoDatabases, serviceEnv } from './service-env.js';
import { Session, settings, type Launched, type Pair } from './session.js';
import { zxcvbnPerCallMs } from './zxcvbn-per-call.js';

if (!existsSync(join(ROOT, 'dist/src/main.js'))) {
  process.stderr.write('dist/src/main.js is missing: build first (npx tsc -p tsconfig.build.json, or make bench)\n');
  process.exit(2);
}
const { connections, durationS, bicRate } = settings;
const run = new Session(mkdtempSync(join(tmpdir(), 'vls-bench-')));
const { rows, dir } = run;

// ---- 1. baselines, each a child process (the Koa one stays up, warm, for the ratios to Koa further down)
let warmKoa: Proc | null = null;
for (const [id, label, script] of [['koa', 'bare Koa (baseline)', 'baseline-koa.ts'], ['http', 'bare node:http (baseline)', 'baseline-http.ts']]) {
  if (!run.wanted(id)) continue;
  let proc: Proc | null = null;
  try {
    proc = await startBaseline(id, script, dir);
    rows.push(await run.measure(id, label, proc.url, [{ method: 'GET', path: '/', headers: {} }], proc.pid));
    if (id === 'koa') [warmKoa, proc] = [proc, null];
  } catch (err) {
    run.mark(id, label, 'failed', `could not run: ${(err as Error).message}`);
  } finally {
    await proc?.stop();
  }
}

// ---- 1b. the peer a user might build instead (bench/fastify-peer.ts): a row of its own, then kept up, warm, for the
// rotation with the service's endpoints below ("BIC vs Fastify peer", issue #48).
const PEER: [string, string] = ['fastify-peer', 'Fastify peer, BIC (fastify-openapi-glue)'];
const PEER_KEY = 'vls_bench_peer_key';
let warmPeer: Proc | null = null;
if (run.wanted(PEER[0])) {
  try {
    warmPeer = await startBaseline(PEER[0], 'fastify-peer.ts', dir, [], { PEER_API_KEY: PEER_KEY, PEER_LOG_FILE: join(dir, 'fastify-peer-access.log') });
    const requests = requestsFor(endpoint('bic'), PEER_KEY);
    const p = await probe(warmPeer.url, endpoint('bic'), PEER_KEY);
    if (!p.ok) throw new Error(`BIC probe answered ${p.problem}`);
    const w = await warmUntilSteady(warmPeer.url, [], requests, connections, settings.serviceWarmupMaxS);
    run.log(`fastify-peer: warm-up ${w.seconds.toFixed(1)} s (req/s per second: ${w.rounds.join(', ')})`);
    rows.push(await run.measure(PEER[0], PEER[1], warmPeer.url, requests, warmPeer.pid, ['Fastify 5, fastify-openapi-glue on openapi.yaml, Ajv, SHA-256 key hook, @fastify/rate-limit, pino at info to a file, UUID ids']));
  } catch (err) {
    run.mark(PEER[0], PEER[1], 'failed', `could not run: ${(err as Error).message}`);
    await warmPeer?.stop();
    warmPeer = null;
  }
}

// ---- 2. local upstreams: DNS, range API, TLS
const fixtures = await startFixtures(dir, BREACHED);
const geo = geoDatabases();
const env = (name: string, extra: Record<string, string> = {}) => ({ ...serviceEnv(fixtures, run.freshDir(name), geo), ...extra });
/** Requests the fixtures received during a row: a warm cache keeps this at 0. */
const upstream = (id: string): (() => string) | null => {
  const count = id === 'dns' || id === 'email' ? () => fixtures.dns.queries.length : id.startsWith('password') ? fixtures.range.requests : id === 'tls' ? fixtures.tls.server.connections : null;
  if (!count) return null;
  const before = count();
  const what = id.startsWith('password') ? 'range requests' : id === 'tls' ? 'TLS connections' : 'DNS queries';
  return () => `${count() - before} upstream ${what} during warm-up + run`;
};

/**
 * The "vs Koa" targets from alternated slices (BIC, IBAN, card, IP each against a bare Koa started for it),
 * not from rows measured a minute apart: the host's speed drifts more than the margins in between.
 */
let koaPaired = false;
async function ratiosToKoa(url: string, key: string, pid: number): Promise<void> {
  const ids = KOA_PAIRED.filter((id) => run.wanted(id));
  if (koaPaired || ids.length === 0) return;
  koaPaired = true;
  let koa: Proc | null = warmKoa;
  warmKoa = null;
  try {
    const koaSide = (k: Proc) => ({ url: k.url, requests: [{ method: 'GET' as const, path: '/', headers: {} }], pid: k.pid });
    // Warm, like every service start: the baseline row's Koa, else one warmed up here (a cold Koa in the first
    // slice, before its JIT, gave the service 1.5-1.9x in that round).
    if (!koa) {
      koa = await startBaseline('koa-pairs', 'baseline-koa.ts', dir);
      const w = await warmUntilSteady(koa.url, [], koaSide(koa).requests, connections, settings.serviceWarmupMaxS);
      run.log(`koa-pairs: warm-up ${w.seconds.toFixed(1)} s (req/s per second: ${w.rounds.join(', ')})`);
    }
    const perSide = Math.max(1, durationS * 0.7);
    run.log(`bare Koa, ${ids.join(', ')} in turn: ${settings.pairRounds} rounds of ${(perSide / settings.pairRounds).toFixed(1)} s per side`);
    const sides = Object.fromEntries(ids.map((id) => [id, { url, requests: requestsFor(endpoint(id), key), pid }]));
    const peer = warmPeer ? { url: warmPeer.url, requests: requestsFor(endpoint('bic'), PEER_KEY), pid: warmPeer.pid } : undefined;
    if (peer) run.log('the Fastify peer joins the rotation (BIC vs Fastify peer)');
    await run.ratiosToKoaAndBic(sides, koaSide(koa), perSide, peer);
  } catch (err) {
    run.log(`ratios to Koa not measured: ${(err as Error).message}`);
  } finally {
    await koa?.stop();
    await warmPeer?.stop();
    warmPeer = null;
  }
}
const KOA_PAIRED = ['bic', 'iban', 'card', 'ip'];
const PEER_PAIR = 'bic-vs-fastify-peer';

// ---- 3. the service (embedded store, limits on): every endpoint, then the password endpoint saturated beside BIC
const state = { limitsOn: null as boolean | null };
const mainIds = ENDPOINTS.map((e): [string, string] => [e.id, e.label]).filter(([id]) => run.wanted(id));
const concurrent: Array<[string, string]> = [['password-concurrent', 'password, concurrent with ↓'], ['bic-under-password', 'BIC while password saturated']];
// The password endpoint goes last (and out of the first warm-up): its worker threads start on demand, so the memory of
// the rows before it is the service's own (the GeoIP target), and their CPU is not shared with a starting pool.
// The crafted password row goes after BIC beside the saturated password endpoint (#4), so that row sees the pool as
// the 12-character row left it, as before the crafted row existed.
const usesPool = (id: string): boolean => id.startsWith('password');
const CRAFTED = 'password-crafted';
const measureOrder = [...mainIds.filter(([id]) => !usesPool(id)), ...mainIds.filter(([id]) => usesPool(id) && id !== CRAFTED)];
const main = await run.launch({ name: 'service', env: env('main'), dir }, 'BIC, limits on (embedded)', [...mainIds, ...concurrent], mainIds.map(([id]) => id).filter((id) => !usesPool(id)));
if (main) {
  const { svc, key } = main;
  const bicProbe = await probe(svc.url, endpoint('bic'), key);
  state.limitsOn = bicProbe.headers.has('ratelimit-limit');
  const measureRow = async (id: string, label: string): Promise<void> => {
    const note: string[] = id === 'bic' && !state.limitsOn ? ['no RateLimit-* headers: limits are not active'] : [];
    const p = await probe(svc.url, endpoint(id), key);
    if (!p.ok) return run.mark(id, label, 'failed', `probe answered ${p.problem}`);
    if (p.problem) note.push(`WARNING ${p.problem}`);
    if (id === 'password') await ratiosToKoa(svc.url, key, svc.pid); // before the password pool exists
    if (id === 'password') await waitIdle(svc.pid, 15); // the pool started on the probe
    const upstreamNote = upstream(id);
    const row = await run.measure(id, label, svc.url, requestsFor(endpoint(id), key), svc.pid, note, usesPool(id) ? Math.max(2, settings.warmupS) : settings.warmupS);
    if (upstreamNote) row.note = [row.note, upstreamNote()].filter(Boolean).join('; ');
    rows.push(row);
  };
  for (const [id, label] of measureOrder) await measureRow(id, label);
  await ratiosToKoa(svc.url, key, svc.pid); // when the password row was not wanted
  if (run.wanted('bic-under-password')) {
    if (!(await probe(svc.url, endpoint('password'), key)).ok) {
      for (const [id, label] of concurrent) run.mark(id, label, 'failed', 'the password endpoint does not answer 200');
    } else {
      run.log(`password saturated (${connections} connections) + BIC at ${bicRate}/s (${connections} connections), ${durationS} s`);
      const rss = new PeakRss(svc.pid);
      rss.start();
      const [pw, bic] = await Promise.all([
        runLoad({ url: svc.url, requests: requestsFor(endpoint('password'), key), connections, durationS }),
        runLoadInChild({ url: svc.url, requests: requestsFor(endpoint('bic'), key), connections, durationS, overallRate: bicRate }),
      ]);
      const peak = rss.stop();
      rows.push(run.toRow(concurrent[0][0], concurrent[0][1], pw, peak, []));
      rows.push(run.toRow(concurrent[1][0], concurrent[1][1], bic, peak, [`open loop at ${bicRate} req/s: event-loop latency, not a CPU fight; target p99 < 25 ms`]));
    }
  }
  // Issue #29: what a crafted password costs the service per request against a typical one, in turn on one service.
  for (const [id, label] of mainIds.filter(([id]) => id === CRAFTED)) await measureRow(id, label);
  if (run.wanted('password') && rows.some((r) => r.id === CRAFTED && r.status === 'ok')) {
    const side = (id: string) => ({ url: svc.url, requests: requestsFor(endpoint(id), key), pid: svc.pid });
    run.log(`password crafted and typical in turn: ${settings.pairRounds} rounds of ${(durationS / settings.pairRounds).toFixed(1)} s per side`);
    const p = await run.alternate(`${CRAFTED}-vs-password`, 'password (POST, 12 ch)', side(CRAFTED), side('password'), durationS);
    const row = rows.find((r) => r.id === CRAFTED)!;
    const cost = p.cpuUsPerReq !== null && p.versusCpuUsPerReq ? `; in turn with the 12-character row: CPU ${p.cpuUsPerReq.toFixed(0)} vs ${p.versusCpuUsPerReq.toFixed(0)} us/req` : '';
    row.note = [row.note, `req/s ${p.ratio.toFixed(2)}x the 12-character row's${cost}`].filter(Boolean).join('; ');
  }
}

// ---- 3b. BIC on openapi-backend's stock router (same service otherwise): what the precompiled router gains
const STOCK: [string, string] = ['bic-stock-router', 'BIC, stock openapi-backend router'];
if (run.wanted(STOCK[0])) {
  const stock = await run.launch({ name: 'service-stock-router', env: env('stock'), dir, script: 'stock-router-service.ts' }, STOCK[1], [STOCK]);
  if (stock) {
    rows.push(await run.measure(STOCK[0], STOCK[1], stock.svc.url, requestsFor(endpoint('bic'), stock.key), stock.svc.pid, ['same service, router left as openapi-backend builds it']));
    await stock.svc.stop();
  }
}

// ---- 4. BIC variants, each measured alternately with the service it is compared to
const OFF: [string, string] = ['bic-limits-off', 'BIC, limits off'];
const REDIS: [string, string] = ['bic-redis', 'BIC, limits on, Redis'];
const redisOk = redisBinaryPresent();
// The server module: dist/src/serve.js since the entry checks the Node first (main.js alone in older builds).
const serverModule = ['dist/src/serve.js', 'dist/src/main.js'].map((f) => join(ROOT, f)).find((f) => existsSync(f))!;
const clusterMode = readFileSync(serverModule, 'utf8').includes('node:cluster');
const W2: [string, string] = ['bic-workers-2', `BIC, WORKERS=2${redisOk ? ', Redis' : ''}`];
// wrk (one C thread) where installed, for every pair below: autocannon alone takes about one of the two cores here,
// which caps what a second worker can show, and it spends more CPU per response parsing the five limit header fields,
// a cost of the load generator sharing the service's cores that would be charged to the limiter (BENCHMARKS.md,
// Method). Both sides of a pair use the same generator.
const loader = wrkPresent() ? 'wrk' : 'autocannon';
const loaderNote = `load generator: ${loader}`;
let redis: BenchRedis | null = null;
let off: Launched | null = null;
let red: Launched | null = null;
// Both sides of the limits pair start fresh, together, and differ only in RATE_LIMITS: the main service has by now
// served every row and holds the password pool's threads, full caches and a grown heap, a history the limits-off
// side would not share.
await main?.svc.stop();
let on: Launched | null = null;
if (run.wanted(OFF[0]) || run.wanted(REDIS[0])) {
  [off, on] = await Promise.all([
    run.launch({ name: 'service-limits-off', env: env('off', { RATE_LIMITS: 'off' }), dir }, OFF[1], [OFF]),
    run.wanted(OFF[0]) ? run.launch({ name: 'service-limits-on', env: env('on'), dir }, 'BIC, limits on (embedded)', [OFF]) : null,
  ]);
}
if (off && on && run.wanted(OFF[0])) await run.pair(OFF[0], off, on, ['RATE_LIMITS=off: the same service with no limiter; both started fresh', loaderNote], loader);
await on?.svc.stop();
if (run.wanted(REDIS[0]) || run.wanted(W2[0])) {
  if (!redisOk) run.mark(REDIS[0], REDIS[1], 'skipped', 'redis-server not installed (apt-get install -y redis-server)');
  else {
    redis = await startRedis();
    red = await run.launch({ name: 'service-redis', env: env('redis', { REDIS_URL: redis.url }), dir }, REDIS[1], [REDIS]);
    if (red && off && run.wanted(REDIS[0])) await run.pair(REDIS[0], red, off, [loaderNote], loader);
    else if (red && run.wanted(REDIS[0])) run.mark(REDIS[0], REDIS[1], 'failed', 'no limits-off service to compare with');
  }
}
await off?.svc.stop();
if (run.wanted(W2[0])) {
  if (!clusterMode) run.mark(W2[0], W2[1], 'skipped', 'no cluster mode: dist/src/main.js does not use node:cluster');
  else {
    // Without Redis the workers count in the primary (embedded store): compared with nothing here, so a skip.
    const extra = { WORKERS: '2', ...(redis ? { REDIS_URL: redis.url } : {}) };
    const w2 = await run.launch({ name: 'service-workers-2', env: env('workers', extra), dir, processes: 3 }, W2[1], [W2], [], redis ? 'failed' : 'skipped');
    const base = red ?? null;
    if (w2 && base) await run.pair(W2[0], w2, base, ['RSS = primary + 2 workers', loaderNote], loader);
    else if (w2) run.mark(W2[0], W2[1], 'skipped', 'no WORKERS=1 service on the same store to compare with');
    await w2?.svc.stop();
  }
}
await red?.svc.stop();
await redis?.stop();
await fixtures.close();
await warmKoa?.stop(); // when no ratio to Koa was measured
await warmPeer?.stop();

// ---- 5. report
run.log("zxcvbn per-call time (in this process, the service's options)");
const zx = await zxcvbnPerCallMs(PASSWORDS);
const pwRow = rows.find((r) => r.id === 'password');
if (pwRow) pwRow.note = [pwRow.note, `zxcvbn per call: ${zx}`].filter(Boolean).join('; ');
addRatios(rows);
// Issue #30's target: 1,000 IBANs in one request at least 20x the throughput of 1,000 single requests (same keep-alive connections).
const bulkRow = rows.find((r) => r.id === 'iban-bulk');
const singleRow = rows.find((r) => r.id === 'iban');
const bulkGain = bulkRow?.rps && singleRow?.rps ? (bulkRow.rps * BULK_ITEMS) / singleRow.rps : null;
if (bulkRow && bulkGain !== null) {
  bulkRow.note = [bulkRow.note, `${Math.round(bulkRow.rps! * BULK_ITEMS)} IBANs/s = ${bulkGain.toFixed(1)}x the IBAN row's ${Math.round(singleRow!.rps!)} req/s (target >= 20x)`].filter(Boolean).join('; ');
}
const openLoop = rows.find((r) => r.id === 'bic-under-password');
if (openLoop) openLoop.vsKoa = openLoop.vsHttp = null; // a fixed request rate, not a throughput
const order = ['koa', 'http', PEER[0], ...ENDPOINTS.map((e) => e.id), ...concurrent.map(([id]) => id), STOCK[0], OFF[0], REDIS[0], W2[0]];
rows.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
const targets = evaluateTargets(rows, run.pairs, { realGeoDbs: geo.real, cores: cpus().length });
const failed = rows.some((r) => r.status === 'failed');
const machine = {
  nproc: cpus().length,
  cpuModel: /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown',
  memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  node: process.version,
};
const header =
  `${machine.nproc} CPU (${machine.cpuModel}), ${machine.memoryGb} GB, node ${machine.node}; ${connections} connections; ` +
  `after each service start: idle, then warm-up until BIC req/s is steady (max ${settings.serviceWarmupMaxS} s); ` +
  `${settings.warmupS} s warm-up + ${durationS} s per row; GeoIP: ${geo.real ? 'GeoLite2 (var/geoip)' : 'MaxMind test databases'}; ` +
  `limits on main rows: ${state.limitsOn === null ? 'unknown' : state.limitsOn ? 'yes' : 'NO'}; total ${run.elapsedS().toFixed(0)} s; ` +
  stealSummary([...rows.map((r) => r.stealPct), ...run.pairs.map((p) => p.stealPct)]);
/** The host's steal over the measured windows: above ~10% the ratios of this run say more about the host than the code. */
function stealSummary(values: Array<number | null>): string {
  const v = values.filter((x): x is number => x !== null).sort((a, b) => a - b);
  if (v.length === 0) return 'host steal: not measured';
  const median = v[v.length >> 1];
  const warn = median > 10 ? ' (a disturbed host: compare ratios only with runs of low steal)' : '';
  return `host steal: median ${median.toFixed(1)}%, max ${v[v.length - 1].toFixed(1)}%${warn}`;
}
const koaPairs = run.pairs.filter((p) => p.id.endsWith('-vs-koa') || p.id.endsWith('-vs-bic') || p.id === PEER_PAIR);
/**
 * CPU per request of both sides, the load generator's on each side and the host's steal: what part of a ratio is the
 * service's own cost. autocannon shares the two cores and costs more per response with more header fields or a body.
 */
const cpuNote = (p: Pair): string => {
  if (p.cpuUsPerReq === null || p.versusCpuUsPerReq === null) return '';
  const loader = p.loaderUsPerReq === null || p.versusLoaderUsPerReq === null ? '' : ` (autocannon ${p.loaderUsPerReq.toFixed(1)} vs ${p.versusLoaderUsPerReq.toFixed(1)})`;
  return `; CPU ${p.cpuUsPerReq.toFixed(1)} vs ${p.versusCpuUsPerReq.toFixed(1)} us/req${loader}${p.stealPct === null ? '' : `, steal ${p.stealPct.toFixed(1)}%`}`;
};
const alternated = koaPairs.length
  ? `\n\nBare Koa and the endpoints in turn (req/s ratios, median of the rounds' ratios):\n${koaPairs
      .map((p) => `  ${p.id.replace(/-vs-/, ' vs ').padEnd(17)} ${p.ratio.toFixed(2)}x (${p.rounds.map((r) => r.toFixed(2)).join(', ')}; ${Math.round(p.rps)} vs ${Math.round(p.versusRps)} req/s${cpuNote(p)})`)
      .join('\n')}`
  : '';
process.stdout.write(`\n${header}\n\n${formatTable(rows)}${alternated}\n\nTargets:\n${formatTargets(targets)}\n`);
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const json = { date: new Date().toISOString(), machine, settings, services: run.services, pairs: run.pairs, realGeoDbs: geo.real, limitsOn: state.limitsOn, zxcvbnPerCall: zx, rows, targets, failed };
writeFileSync(join(ROOT, 'bench/results/latest.json'), `${JSON.stringify(json, null, 2)}\n`);
writeFileSync(join(ROOT, 'bench/results/latest.md'), formatMarkdown(`${json.date}: ${header}`, rows, targets) + alternated.replace(/^\n\n/, '\n\n```\n') + (alternated ? '\n```\n' : ''));
process.stdout.write(`\nwritten: bench/results/latest.json, bench/results/latest.md${failed ? '\nFAILED: a row had non-2xx answers, errors, or could not run' : ''}\n`);
if (failed) process.stdout.write(`service logs kept in ${dir}\n`);
else rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
