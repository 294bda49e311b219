// Keys at scale (docs/adr/0012-keys-on-demand.md, 0019): 1,000,000 keys in the embedded store; start-up, memory, CLI
// changes and a held lock under load, unknown-key cost. What it measures and how: bench/README.md, "Keys at scale".
//   npm run build && node --import tsx bench/keys-scale.ts [--keys 1000000] [--load-s 20] [--seeded-dir DIR]
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import type { Pool } from 'undici';
import { KeyDirectory } from '../src/accounts/key-directory.js';
import { newKeyRecord } from '../src/adapters/keys/key-store.js';
import { createSqliteKeyStore } from '../src/adapters/keys/sqlite-key-store.js';
import { openDatabase } from '../src/adapters/sqlite/database.js';
import { median, round } from './load.js';
import { cpuSeconds, keysCli, ROOT, rssMb, scrapeMetrics, startService, type Proc } from './processes.js';
import { geoDatabases, HIGH_LIMITS } from './service-env.js';
import { log } from './session.js';
import { msUntil, send, summarise, timedLoad, timedPool, type Timed } from './timed-load.js';
import { runBench } from './children.js';

const arg = (name: string): string | undefined => process.argv[process.argv.indexOf(`--${name}`) + 1 || -1];
const KEYS = Number(arg('keys') ?? 1_000_000);
const LOAD_S = Number(arg('load-s') ?? 20);
const SEEDED_DIR = arg('seeded-dir') ?? null;
const CONNECTIONS = 8;
const ROUNDS = 5;
const PATH = '/api/v1/bic/DEUTDEFF';
const IMPORTED = 10_000;
const LOCK_MS = 3000;
const freshKey = () => `vls_${randomBytes(24).toString('base64url')}`;
// Start-up and latency on the whole host, as ADR 0012 measured them: the server not pinned to a CPU (cpu-usage.ts).
process.env.BENCH_PIN ??= '0';

type Seeded = { dir: string; key: string; victim: { id: string; key: string } };
type Server = { proc: Proc; pool: Pool };

/** The store of `n` keys: a copy of SEEDED_DIR's when it holds one of `n` keys, else seeded (and kept there when set). */
async function seeded(n: number): Promise<Seeded> {
  const manifest = SEEDED_DIR && join(SEEDED_DIR, 'seed.json');
  const kept = manifest && existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as Omit<Seeded, 'dir'> & { keys: number }) : null;
  if (!SEEDED_DIR || !manifest || kept?.keys !== n) {
    const fresh = await seed(n);
    if (!SEEDED_DIR || !manifest) return fresh;
    mkdirSync(SEEDED_DIR, { recursive: true });
    copyFileSync(join(fresh.dir, 'service.db'), join(SEEDED_DIR, 'service.db'));
    writeFileSync(manifest, JSON.stringify({ keys: n, key: fresh.key, victim: fresh.victim }));
    log(`kept the seeded store in ${SEEDED_DIR}`);
    return fresh;
  }
  const dir = mkdtempSync(join(tmpdir(), 'vls-keys-scale-'));
  copyFileSync(join(SEEDED_DIR, 'service.db'), join(dir, 'service.db'));
  log(`copied the seeded store of ${n} keys from ${SEEDED_DIR}`);
  return { dir, key: kept.key, victim: kept.victim };
}

/** A store under a fresh DATA_DIR holding `n` keys besides the bench's own (high limits), and a feed row per key. */
async function seed(n: number): Promise<Seeded> {
  const dir = mkdtempSync(join(tmpdir(), 'vls-keys-scale-'));
  const db = openDatabase(dir);
  // The seed only: a larger page cache for a million random index inserts (the server keeps SQLite's default).
  db.pragma('cache_size = -262144');
  const store = createSqliteKeyStore(db);
  // The bench's own keys first: a change through the store prunes the feed, and the seeded feed must stay whole.
  const high = Number(HIGH_LIMITS.QUOTA_PER_DAY);
  const limits = { perMinute: high, perDay: high, perMonth: high };
  const { key } = await store.create({ name: 'bench', ...limits });
  const victim = await store.create({ name: 'to-revoke', ...limits });
  const t0 = performance.now();
  // Rows straight into the store's table, as the store's insert writes them: its triggers add a feed row per key,
  // and nothing prunes the feed (the first change of the bench does). createMany would prune as it goes.
  const insert = db.prepare(
    `INSERT INTO api_keys (id, name, key_hash, status, per_minute, per_day, per_month, created_at, updated_at)
     VALUES (@id, @name, @hash, 'active', NULL, NULL, NULL, @createdAt, @createdAt)`,
  );
  const rows = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) insert.run(newKeyRecord({ name: `customer-${i}` }).record);
  });
  for (let i = 0; i < n; i += 100_000) rows(i, Math.min(n, i + 100_000));
  if (n > 0) log(`seeded ${n} keys (and ${db.prepare('SELECT COUNT(*) FROM api_key_changes').pluck().get()} feed rows) in ${round((performance.now() - t0) / 1000)} s`);
  // Closing checkpoints the WAL into service.db: the file alone is then the whole store (copied by --seeded-dir).
  await store.close();
  return { dir, key, victim: { id: victim.record.id, key: victim.key } };
}

/**
 * The built server on the store (processes.ts, log in DATA_DIR); ready when `key` first gets a 200, polled every 10 ms
 * (the time from spawn is the start-up figure), with its CPU time until then (a loaded host stretches the wall time far
 * more). RSS after 3 s of load.
 */
async function start(dataDir: string, key: string) {
  const { city, asn } = geoDatabases();
  const env = { DATA_DIR: dataDir, GEOIP_CITY_DB: city, GEOIP_ASN_DB: asn, ...HIGH_LIMITS, LOG_LEVEL: 'warn', WORKERS: '1' };
  const proc = await startService({ name: 'service', env, dir: dataDir, ready: { path: PATH, headers: { 'x-api-key': key }, intervalMs: 10 } });
  const server: Server = { proc, pool: timedPool(proc.url, CONNECTIONS) };
  const result = { firstAnswerS: round(proc.readyAfterS, 2), cpuS: round(cpuSeconds(proc.pid), 2), rssMb: 0 };
  await load(server, 3, () => key);
  return { server, result: { ...result, rssMb: round(rssMb(proc.pid)) } };
}

const stop = async (s: Server) => {
  await s.pool.close();
  await s.proc.stop();
};
const status = (s: Server, key: string) => send(s.pool, { method: 'GET', path: PATH, headers: { 'x-api-key': key } }, []);
/** Milliseconds from now until `key` answers `want` (polled every 5 ms, beside the load). */
const until = (s: Server, key: string, want: number) => msUntil(async () => (await status(s, key)) === want);

/** CONNECTIONS closed loops for `seconds` (or until the promise settles), each request with `keyOf()`. */
async function load(s: Server, until: number | Promise<unknown>, keyOf: () => string, samples: Timed[] = []) {
  await timedLoad({ pool: s.pool, connections: CONNECTIONS, until, samples, request: () => ({ method: 'GET', path: PATH, headers: { 'x-api-key': keyOf() } }) });
  return summarise(samples);
}

/** The server's largest event-loop delay since the previous call, ms (prom-client's, 10 ms resolution, reset at every scrape). */
const eventLoopMaxMs = async (url: string) => round((await scrapeMetrics(url)).metric('nodejs_eventloop_lag_max_seconds') * 1000);

/** Another process holding the store's write lock (BEGIN IMMEDIATE) for LOCK_MS, as another program would. */
async function holdWriteLock(dataDir: string): Promise<{ heldMs: number }> {
  const code = `const db = new (require('better-sqlite3'))(process.argv[1]);
    db.pragma('busy_timeout = 10000');
    db.exec('BEGIN IMMEDIATE');
    const t = performance.now();
    setTimeout(() => { db.exec('COMMIT'); db.close(); process.stdout.write(String(performance.now() - t)); }, ${LOCK_MS});`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', code, join(dataDir, 'service.db')], { cwd: ROOT });
  return { heldMs: round(Number(stdout)) };
}

/** Milliseconds until the database holds the day count the server reported for `key` when called (the counts made under the lock). */
async function countsWritten(s: Server, dataDir: string, key: string): Promise<number> {
  const res = await s.pool.request({ method: 'GET', path: '/api/v1/usage', headers: { 'x-api-key': key } });
  const usage = (await res.body.json()) as { keyId: string; day: { used: number } };
  const db = new Database(join(dataDir, 'service.db'), { readonly: true });
  const stored = () => (db.prepare('SELECT count FROM usage_counters WHERE counter_key LIKE ?').pluck().all(`{${usage.keyId}}:d:%`) as number[])[0] ?? 0;
  return msUntil(async () => stored() >= usage.day.used, 10).finally(() => db.close());
}

/**
 * The key directory alone, in this process, on the seeded store: open to first answer; then the cost of one
 * authenticate() per kind of key (the SQLite lookups are the only synchronous store work on the request path).
 */
async function directoryAlone(dataDir: string, key: string) {
  const t0 = performance.now();
  const store = createSqliteKeyStore(openDatabase(dataDir));
  const dir = new KeyDirectory({ store });
  await dir.refresh();
  await dir.authenticate(key);
  const firstAnswerMs = round(performance.now() - t0, 2);
  const perCall = async (n: number, keyOf: (i: number) => string) => {
    let slowest = 0;
    const t = performance.now();
    for (let i = 0; i < n; i++) {
      const c = performance.now();
      await dir.authenticate(keyOf(i)).catch(() => undefined);
      slowest = Math.max(slowest, performance.now() - c);
    }
    return { meanUs: round(((performance.now() - t) / n) * 1000, 1), maxUs: round(slowest * 1000, 0) };
  };
  const unknown = freshKey();
  const fresh = Array.from({ length: 20_000 }, freshKey);
  const result = {
    firstAnswerMs,
    knownKeyCached: await perCall(20_000, () => key),
    unknownKeyRepeated: await perCall(20_000, () => unknown),
    freshUnknownKeyEach: await perCall(fresh.length, (i) => fresh[i]),
    cacheEntriesAfter: dir.stats().size,
  };
  await store.close();
  return result;
}

/** Start-up and memory, empty and seeded store alternately (the machine's load drifts): medians of the rounds. */
async function startups(stores: { empty: Seeded; seeded: Seeded }) {
  const rounds = { empty: [] as Array<Awaited<ReturnType<typeof start>>['result']>, seeded: [] as Array<Awaited<ReturnType<typeof start>>['result']> };
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of ['empty', 'seeded'] as const) {
      const { server, result } = await start(stores[name].dir, stores[name].key);
      await stop(server);
      rounds[name].push(result);
      log(`${name}: ${JSON.stringify(result)}`);
    }
  }
  const summary = (name: 'empty' | 'seeded') => ({
    firstAnswerSMedian: median(rounds[name].map((x) => x.firstAnswerS)),
    cpuSAtFirstAnswerMedian: median(rounds[name].map((x) => x.cpuS)),
    rssMbMedian: median(rounds[name].map((x) => x.rssMb)),
    rounds: rounds[name],
  });
  return { empty: summary('empty'), seeded: summary('seeded') };
}

/**
 * Steady load; meanwhile, one after the other: 5 creates, 1 revoke, an import of 10,000 keys (built CLI), then a second
 * process holding the write lock for 3 s. Each phase's latencies are those of the requests sent during it.
 */
async function cliChanges(s: Server, { dir, key, victim }: Seeded) {
  const marks: Array<{ phase: string; at: number }> = [];
  const mark = (phase: string) => marks.push({ phase, at: performance.now() });
  const samples: Timed[] = [];
  const cliS: Record<string, number> = {};
  const timed = async (name: string, ...args: string[]) => {
    const t = performance.now();
    const stdout = await keysCli({ DATA_DIR: dir }, ...args);
    cliS[name] = round((performance.now() - t) / 1000, 2);
    return stdout;
  };
  mark('before changes');
  let finish!: () => void;
  const steady = load(s, new Promise<void>((r) => (finish = r)), () => key, samples);
  await new Promise((r) => setTimeout(r, 2000));
  if ((await status(s, victim.key)) !== 200) throw new Error('the key to revoke does not answer 200');
  const newKeyUsableMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    mark(`keys create ${i + 1}`);
    const out = await timed(`create ${i + 1}`, 'create', '--name', `during-load-${i}`, '--json');
    newKeyUsableMs.push(await until(s, (JSON.parse(out) as { key: string }).key, 200));
  }
  mark('keys revoke');
  await timed('revoke', 'revoke', victim.id);
  const revokedRefusedMs = await until(s, victim.key, 403);
  mark('keys import of 10,000');
  const file = join(dir, 'import.jsonl');
  writeFileSync(file, Array.from({ length: IMPORTED }, (_, i) => JSON.stringify({ name: `imported-${i}` })).join('\n'));
  const importedKeyUsableMs = await until(s, (await timed('import', 'import', file)).trim().split('\n').at(-1)!, 200);
  mark('write lock held 3 s');
  const lock = await holdWriteLock(dir);
  mark('after the lock');
  const countsWrittenAfterReleaseMs = await countsWritten(s, dir, key);
  await new Promise((r) => setTimeout(r, 1000));
  finish();
  const during = await steady;
  const phases = marks.map((m, i) => {
    const x = summarise(samples.filter((t) => t.at >= m.at && t.at < (marks[i + 1]?.at ?? Infinity)));
    return { phase: m.phase, requests: x.n, maxLatencyMs: x.max, p99Ms: x.p99 };
  });
  const loop = await eventLoopMaxMs(s.proc.url);
  return { requests: during.n, statuses: during.statuses, maxLatencyMs: during.max, p99Ms: during.p99, eventLoopDelayMaxMs: loop, phases, cliS, newKeyUsableMs, revokedRefusedMs, importedKeyUsableMs, lock: { heldMs: lock.heldMs, countsWrittenAfterReleaseMs } };
}

/** Server CPU per request by kind of key; the kinds alternate in rounds (the machine's load drifts), each its median. */
async function cost(s: Server, key: string) {
  const unknownKey = freshKey();
  const kinds = { 'known key': () => key, 'one unknown key, repeated': () => unknownKey, 'a fresh unknown key per request': freshKey };
  const rounds: Record<string, Array<{ cpuUs: number; rps: number; statuses: Record<string, number> }>> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, keyOf] of Object.entries(kinds)) {
      const c0 = cpuSeconds(s.proc.pid);
      const x = await load(s, 2, keyOf);
      (rounds[name] ??= []).push({ cpuUs: ((cpuSeconds(s.proc.pid) - c0) / x.n) * 1e6, rps: x.n / 2, statuses: x.statuses });
    }
  }
  const sum = (rs: Array<Record<string, number>>) => rs.reduce<Record<string, number>>((acc, st) => (Object.entries(st).forEach(([k, v]) => (acc[k] = (acc[k] ?? 0) + v)), acc), {});
  return Object.fromEntries(
    Object.entries(rounds).map(([name, rs]) => [
      name,
      { serverCpuUsPerRequestMedian: round(median(rs.map((r) => r.cpuUs)), 0), serverCpuUsPerRequestRounds: rs.map((r) => round(r.cpuUs, 0)), rpsMedian: round(median(rs.map((r) => r.rps)), 0), statuses: sum(rs.map((r) => r.statuses)) },
    ]),
  );
}

async function main(): Promise<void> {
  const empty = await seed(0);
  const full = await seeded(KEYS);
  const directory = await directoryAlone(full.dir, full.key);
  log(`directory alone: ${JSON.stringify(directory)}`);
  const startup = await startups({ empty, seeded: full });
  rmSync(empty.dir, { recursive: true, force: true });
  const { server } = await start(full.dir, full.key);
  // The same load without CLI changes first: on a shared machine its maximum latency is the floor to compare with.
  await eventLoopMaxMs(server.proc.url);
  const reference = await load(server, LOAD_S, () => full.key);
  const sameLoadWithoutChanges = { requests: reference.n, statuses: reference.statuses, maxLatencyMs: reference.max, p99Ms: reference.p99, eventLoopDelayMaxMs: await eventLoopMaxMs(server.proc.url) };
  const duringCliChanges = await cliChanges(server, full);
  const costs = await cost(server, full.key);
  const rssAfterAllMb = round(rssMb(server.proc.pid));
  await stop(server);
  rmSync(full.dir, { recursive: true, force: true });
  const report = {
    keys: KEYS,
    startup: { ...startup, rssDeltaMbMedians: round(startup.seeded.rssMbMedian - startup.empty.rssMbMedian) },
    directoryAlone: directory,
    sameLoadWithoutChanges,
    duringCliChanges,
    cost: costs,
    rssAfterAllMb,
    targets: { firstAnswerS: '< 3', rssDeltaMb: '<= 100', maxLatencyMs: '< 100 throughout', newKeyUsableMs: '< 1000', revokedRefusedMs: '< 1000' },
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

runBench('keys-scale', main);
