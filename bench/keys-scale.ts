// Keys at scale (docs/adr/0012-keys-on-demand.md, 0019): 1,000,000 keys in the embedded store; start-up, memory, CLI
// changes and a held lock under load, unknown-key cost. What it measures and how: bench/README.md, "Keys at scale".
//   npm run build && node --import tsx bench/keys-scale.ts [--keys 1000000] [--load-s 20] [--seeded-dir DIR]
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { KeyDirectory } from '../src/accounts/key-directory.js';
import { newKeyRecord } from '../src/adapters/keys/key-store.js';
import { createSqliteKeyStore } from '../src/adapters/keys/sqlite-key-store.js';
import { openDatabase } from '../src/adapters/sqlite/database.js';
import Database from 'better-sqlite3';
import { median, round } from './load.js';
import { cpuSeconds, type Proc, ROOT, rssMb, scrapeMetrics, startService } from './processes.js';
import { geoDatabases, HIGH_LIMITS } from './service-env.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const KEYS = arg('keys', 1_000_000);
const LOAD_S = arg('load-s', 20);
const SEEDED_DIR = (() => {
  const i = process.argv.indexOf('--seeded-dir');
  return i > 0 ? process.argv[i + 1] : null;
})();
const CONNECTIONS = 8;
const COST_ROUNDS = 5;
const STARTUP_ROUNDS = 5;
const HIGH = Number(HIGH_LIMITS.QUOTA_PER_DAY);
const PATH = '/api/v1/bic/DEUTDEFF';
const run = promisify(execFile);
const log = (s: string) => process.stderr.write(`${s}\n`);

if (!existsSync(join(ROOT, 'dist/src/main.js'))) throw new Error('build first: npm run build');
// As before the shared harness: the server not pinned to a CPU (bench/cpu-usage.ts).
process.env.BENCH_PIN ??= '0';

type Seeded = { dir: string; key: string; victim: { id: string; key: string } };

/** The store of `n` keys: a copy of SEEDED_DIR's when it holds one of `n` keys, else seeded (and kept there when set). */
async function seeded(n: number): Promise<Seeded> {
  if (SEEDED_DIR === null) return seed(n);
  const manifest = join(SEEDED_DIR, 'seed.json');
  const kept = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as Omit<Seeded, 'dir'> & { keys: number }) : null;
  if (kept?.keys !== n) {
    const fresh = await seed(n);
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
  const limits = { perMinute: HIGH, perDay: HIGH, perMonth: HIGH };
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
 * The built server on the store (harness: processes.ts, log in DATA_DIR); ready when `key` first gets a 200, polled every
 * 10 ms (the time from spawn is the start-up figure). With the server's CPU time until then: a loaded shared host
 * stretches the wall time far more than the CPU time.
 */
async function start(dataDir: string, key: string): Promise<{ proc: Proc; pool: Pool; firstAnswerS: number; cpuS: number }> {
  const { city, asn } = geoDatabases();
  const env = { DATA_DIR: dataDir, GEOIP_CITY_DB: city, GEOIP_ASN_DB: asn, ...HIGH_LIMITS, LOG_LEVEL: 'warn', WORKERS: '1' };
  const proc = await startService({ name: 'service', env, dir: dataDir, ready: { path: PATH, headers: { 'x-api-key': key }, intervalMs: 10 } });
  return { proc, pool: new Pool(proc.url, { connections: CONNECTIONS }), firstAnswerS: proc.readyAfterS, cpuS: cpuSeconds(proc.pid) };
}

async function status200(pool: Pool, key: string): Promise<number> {
  const res = await pool.request({ method: 'GET', path: PATH, headers: { 'x-api-key': key } });
  await res.body.dump();
  return res.statusCode;
}

async function stop(s: { proc: Proc; pool: Pool }): Promise<void> {
  await s.pool.close();
  await s.proc.stop();
}

interface Sample {
  at: number;
  ms: number;
}

const summarise = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { n: sorted.length, max: round(sorted.at(-1) ?? NaN), p99: round(sorted[Math.floor(sorted.length * 0.99)]), mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length, 2) };
};

/** CONNECTIONS closed loops for `seconds` (or until `done` settles), each request with `keyOf()`; latencies in ms. */
async function load(pool: Pool, seconds: number | Promise<unknown>, keyOf: () => string, samples: Sample[] = []) {
  const statuses: Record<number, number> = {};
  let over = false;
  const end = typeof seconds === 'number' ? performance.now() + seconds * 1000 : Infinity;
  if (typeof seconds !== 'number') void seconds.finally(() => (over = true));
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (!over && performance.now() < end) {
        const t = performance.now();
        const status = await status200(pool, keyOf());
        samples.push({ at: t, ms: performance.now() - t });
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { ...summarise(samples.map((x) => x.ms)), statuses, samples };
}

/**
 * The server's largest event-loop delay since the previous call, ms: prom-client's nodejs_eventloop_lag_max_seconds
 * (monitorEventLoopDelay, 10 ms resolution, reset at every scrape). It excludes the load generator's own delays.
 */
async function eventLoopMaxMs(url: string): Promise<number> {
  return round((await scrapeMetrics(url)).metric('nodejs_eventloop_lag_max_seconds') * 1000);
}

/** The built CLI against the same DATA_DIR. */
const cli = (dataDir: string, ...args: string[]) => run(process.execPath, [join(ROOT, 'dist/src/cli/keys.js'), ...args], { env: { PATH: process.env.PATH, DATA_DIR: dataDir } });

const IMPORTED = 10_000;
const LOCK_MS = 3000;

/** Another process holding the store's write lock (BEGIN IMMEDIATE) for `ms`, as another program would. */
async function holdWriteLock(dataDir: string, ms: number): Promise<{ heldMs: number }> {
  const code = `const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.pragma('busy_timeout = 10000');
    db.exec('BEGIN IMMEDIATE');
    const t = performance.now();
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); process.stdout.write(String(performance.now() - t)); }, ${ms});`;
  const { stdout } = await run(process.execPath, ['-e', code, join(dataDir, 'service.db')], { cwd: ROOT });
  return { heldMs: round(Number(stdout.split('\n').at(-1))) };
}

/** Milliseconds until the database holds the day count the server reported for `key` when called (the counts made under the lock). */
async function countsWritten(pool: Pool, dataDir: string, key: string): Promise<number> {
  const t0 = performance.now();
  const res = await pool.request({ method: 'GET', path: '/api/v1/usage', headers: { 'x-api-key': key } });
  const usage = (await res.body.json()) as { keyId: string; day: { used: number } };
  const db = new Database(join(dataDir, 'service.db'), { readonly: true });
  try {
    for (;;) {
      const stored = db.prepare('SELECT count FROM usage_counters WHERE counter_key LIKE ?').pluck().all(`{${usage.keyId}}:d:%`) as number[];
      if ((stored[0] ?? 0) >= usage.day.used) return round(performance.now() - t0);
      if (performance.now() - t0 > 10_000) return Infinity;
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    db.close();
  }
}

/** Milliseconds from now until `key` answers `want` (polled every 5 ms, beside the load). */
async function until(pool: Pool, key: string, want: number): Promise<number> {
  const t0 = performance.now();
  while ((await status200(pool, key)) !== want) {
    if (performance.now() - t0 > 10_000) return Infinity;
    await new Promise((r) => setTimeout(r, 5));
  }
  return round(performance.now() - t0);
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
  const unknown = `vls_${randomBytes(24).toString('base64url')}`;
  const fresh = Array.from({ length: 20_000 }, () => `vls_${randomBytes(24).toString('base64url')}`);
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

/** Start on `dir`, first answer, RSS after 3 s of load. */
async function startupAndRss(dir: string, key: string) {
  const server = await start(dir, key);
  await load(server.pool, 3, () => key);
  return { server, result: { firstAnswerS: round(server.firstAnswerS, 2), cpuS: round(server.cpuS, 2), rssMb: round(rssMb(server.proc.pid)) } };
}

async function main(): Promise<void> {
  const empty = await seed(0);
  const full = await seeded(KEYS);
  const directory = await directoryAlone(full.dir, full.key);
  log(`directory alone: ${JSON.stringify(directory)}`);

  // Start-up and memory, empty and seeded store alternately (the machine's load drifts): medians of the rounds.
  const startups: Record<'empty' | 'seeded', Array<{ firstAnswerS: number; cpuS: number; rssMb: number }>> = { empty: [], seeded: [] };
  for (let r = 0; r < STARTUP_ROUNDS; r++) {
    for (const [name, s] of [['empty', empty], ['seeded', full]] as const) {
      const { server, result } = await startupAndRss(s.dir, s.key);
      await stop(server);
      startups[name].push(result);
      log(`${name}: ${JSON.stringify(result)}`);
    }
  }
  rmSync(empty.dir, { recursive: true, force: true });
  const summary = (name: 'empty' | 'seeded') => ({
    firstAnswerSMedian: median(startups[name].map((x) => x.firstAnswerS)),
    cpuSAtFirstAnswerMedian: median(startups[name].map((x) => x.cpuS)),
    rssMbMedian: median(startups[name].map((x) => x.rssMb)),
    rounds: startups[name],
  });
  const startup = { empty: summary('empty'), seeded: summary('seeded') };

  const { server } = await startupAndRss(full.dir, full.key);
  const { pool, proc } = server;
  const { dir, key, victim } = full;

  // The same load without CLI changes first: on a shared machine its maximum latency is the floor to compare with.
  await eventLoopMaxMs(proc.url);
  const reference = await load(pool, LOAD_S, () => key);
  const referenceLoopMs = await eventLoopMaxMs(proc.url);
  // Steady load; meanwhile, one after the other: 5 creates, 1 revoke, an import of 10,000 keys (built CLI), then a
  // second process holding the write lock for 3 s. Each phase's latencies are those of the requests sent during it.
  const marks: Array<{ phase: string; at: number }> = [{ phase: 'before changes', at: performance.now() }];
  const mark = (phase: string) => marks.push({ phase, at: performance.now() });
  const samples: Sample[] = [];
  let finish!: () => void;
  const steady = load(pool, new Promise<void>((r) => (finish = r)), () => key, samples);
  await new Promise((r) => setTimeout(r, 2000));
  if ((await status200(pool, victim.key)) !== 200) throw new Error('the key to revoke does not answer 200');
  const newKeyUsableMs: number[] = [];
  const cliS: Record<string, number> = {};
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const out = await fn();
    cliS[name] = round((performance.now() - t) / 1000, 2);
    return out;
  };
  for (let i = 0; i < 5; i++) {
    mark(`keys create ${i + 1}`);
    const { stdout } = await timed(`create ${i + 1}`, () => cli(dir, 'create', '--name', `during-load-${i}`, '--json'));
    newKeyUsableMs.push(await until(pool, (JSON.parse(stdout) as { key: string }).key, 200));
  }
  mark('keys revoke');
  await timed('revoke', () => cli(dir, 'revoke', victim.id));
  const revokedRefusedMs = await until(pool, victim.key, 403);
  mark('keys import of 10,000');
  const file = join(dir, 'import.jsonl');
  writeFileSync(file, Array.from({ length: IMPORTED }, (_, i) => JSON.stringify({ name: `imported-${i}` })).join('\n'));
  const imported = (await timed('import', () => cli(dir, 'import', file))).stdout.trim().split('\n');
  const importedUsableMs = await until(pool, imported.at(-1)!, 200);
  mark('write lock held 3 s');
  const lock = await holdWriteLock(dir, LOCK_MS);
  mark('after the lock');
  const countsWrittenMs = await countsWritten(pool, dir, key);
  await new Promise((r) => setTimeout(r, 1000));
  finish();
  await steady;
  const phases = marks.map((m, i) => {
    const end = marks[i + 1]?.at ?? Infinity;
    const s_ = summarise(samples.filter((x) => x.at >= m.at && x.at < end).map((x) => x.ms));
    return { phase: m.phase, requests: s_.n, maxLatencyMs: s_.max, p99Ms: s_.p99 };
  });
  const during = summarise(samples.map((x) => x.ms));
  const duringLoopMs = await eventLoopMaxMs(proc.url);

  // Cost per request: server CPU seconds over the requests answered; the three kinds alternate in rounds (the
  // machine's load drifts), and each reports its median round.
  const unknownKey = `vls_${randomBytes(24).toString('base64url')}`;
  const kinds = [
    ['known key', () => key],
    ['one unknown key, repeated', () => unknownKey],
    ['a fresh unknown key per request', () => `vls_${randomBytes(24).toString('base64url')}`],
  ] as const;
  const rounds: Record<string, Array<{ cpuUs: number; rps: number; meanMs: number; statuses: Record<number, number> }>> = {};
  for (let round_ = 0; round_ < COST_ROUNDS; round_++) {
    for (const [name, keyOf] of kinds) {
      const c0 = cpuSeconds(proc.pid);
      const r = await load(pool, 2, keyOf);
      (rounds[name] ??= []).push({ cpuUs: ((cpuSeconds(proc.pid) - c0) / r.n) * 1e6, rps: r.n / 2, meanMs: r.mean, statuses: r.statuses });
    }
  }
  const cost = Object.fromEntries(
    Object.entries(rounds).map(([name, rs]) => [
      name,
      {
        serverCpuUsPerRequestMedian: round(median(rs.map((r) => r.cpuUs)), 0),
        serverCpuUsPerRequestRounds: rs.map((r) => round(r.cpuUs, 0)),
        rpsMedian: round(median(rs.map((r) => r.rps)), 0),
        statuses: rs.reduce<Record<number, number>>((acc, r) => {
          for (const [k, v] of Object.entries(r.statuses)) acc[Number(k)] = (acc[Number(k)] ?? 0) + v;
          return acc;
        }, {}),
      },
    ]),
  );
  const rssAfter = round(rssMb(proc.pid));
  await stop(server);
  rmSync(dir, { recursive: true, force: true });

  const report = {
    keys: KEYS,
    startup: { ...startup, rssDeltaMbMedians: round(startup.seeded.rssMbMedian - startup.empty.rssMbMedian) },
    directoryAlone: directory,
    sameLoadWithoutChanges: { requests: reference.n, statuses: reference.statuses, maxLatencyMs: reference.max, p99Ms: reference.p99, eventLoopDelayMaxMs: referenceLoopMs },
    duringCliChanges: {
      requests: during.n,
      statuses: (await steady).statuses,
      maxLatencyMs: during.max,
      p99Ms: during.p99,
      eventLoopDelayMaxMs: duringLoopMs,
      phases,
      cliS,
      newKeyUsableMs,
      revokedRefusedMs,
      importedKeyUsableMs: importedUsableMs,
      lock: { heldMs: lock.heldMs, countsWrittenAfterReleaseMs: countsWrittenMs },
    },
    cost,
    rssAfterAllMb: rssAfter,
    targets: { firstAnswerS: '< 3', rssDeltaMb: '<= 100', maxLatencyMs: '< 100 throughout', newKeyUsableMs: '< 1000', revokedRefusedMs: '< 1000' },
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(`keys-scale: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
