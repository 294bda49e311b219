// Embedded limit store choice (docs/adr/0013): BIC throughput with RateLimiterMemory + periodic SQLite writes vs RateLimiterSQLite.
//
//   node --import tsx bench/limits-store.ts        (LIMITS_STORE_ROUNDS, default 3; LIMITS_STORE_SECONDS, default 8; LIMITS_STORE_VARIANTS,
//                                                   default off,memory,sqlite (redis too);
//                                                   LIMITS_STORE_CONSUMES, default 50000)
//
// One service process (this one) serves BIC through the full stack with each limiter injected in turn, rounds
// alternating off / memory / sqlite; the load generator runs in a child process. Also prints the cost of one
// limiter.consume() alone (in-process loop), which is what the throughput difference comes from.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RateLimiterSQLite } from 'rate-limiter-flexible';
import { createLimiter } from '../src/accounts/limiter.js';
import { unlimited, type Limiter } from '../src/accounts/limits.js';
import { UNBOUNDED_POINTS, type CounterStore } from '../src/adapters/limits/counter-store.js';
import { createMinuteLimiter } from '../src/adapters/limits/local-counters.js';
import { createSqliteCounters } from '../src/adapters/limits/sqlite-counters.js';
import { createRedisCounters } from '../src/adapters/limits/redis-counters.js';
import { startRedis } from './fixtures.js';
import { openDatabase } from '../src/adapters/keys/sqlite-key-store.js';
import { createApp } from '../src/app.js';
import { compose } from '../src/compose.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/http/logging.js';
import { createHttpServer, listen } from '../src/server.js';
import { runLoadInChild } from './load-child.js';

const ROUNDS = Number(process.env.LIMITS_STORE_ROUNDS ?? 3);
const CONSUMES = Number(process.env.LIMITS_STORE_CONSUMES ?? 50_000);
const SECONDS = Number(process.env.LIMITS_STORE_SECONDS ?? 8);
const DEFAULTS = { perMinute: 1e9, perDay: 1e12, perMonth: 1e12 };

type Variant = 'off' | 'memory' | 'sqlite' | 'redis';
const VARIANTS = (process.env.LIMITS_STORE_VARIANTS ?? 'off,memory,sqlite').split(',') as Variant[];
let redisUrl = '';

async function counters(variant: Exclude<Variant, 'off'>, dir: string): Promise<CounterStore> {
  const db = openDatabase(dir);
  if (variant === 'memory') return createSqliteCounters({ db });
  if (variant === 'redis') {
    const store = createRedisCounters({ url: redisUrl });
    await store.ready();
    return store;
  }
  let calendar!: RateLimiterSQLite;
  await new Promise<void>((resolve, reject) => {
    const opts = { storeClient: db, storeType: 'better-sqlite3', tableName: 'rlf_calendar', points: UNBOUNDED_POINTS, duration: 60 };
    calendar = new RateLimiterSQLite(opts, (err?: Error) => (err ? reject(err) : resolve()));
  });
  return { minute: createMinuteLimiter(), calendar, healthy: () => true, close: async () => void db.close() };
}

async function limiterFor(variant: Variant, dir: string): Promise<Limiter> {
  return variant === 'off' ? unlimited : createLimiter({ defaults: DEFAULTS, counters: await counters(variant, dir) });
}

async function serve(variant: Variant, dir: string) {
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1', PASSWORD_THREADS: '1', DNS_SERVERS: '127.0.0.1:9' });
  const composition = await compose(config, createLogger('warn'), { limiter: await limiterFor(variant, dir), defaultMetrics: false });
  const server = createHttpServer(createApp(composition.deps));
  await listen(server, 0, '127.0.0.1');
  const { key } = await composition.keyStore.create({ name: 'bench' });
  await composition.keys.refresh();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    key,
    async close() {
      await new Promise((r) => server.close(r));
      await composition.close();
    },
  };
}

/** Wall and CPU microseconds per limiter.consume(), one key, in a loop (no HTTP). */
async function perConsume(variant: Exclude<Variant, 'off'>, dir: string, n = 50_000): Promise<{ wall: number; cpu: number }> {
  const limiter = await limiterFor(variant, dir);
  const key = { id: 'key_bench', name: 'bench', status: 'active', perMinute: null, perDay: null, perMonth: null, createdAt: '' } as const;
  for (let i = 0; i < 2000; i++) await limiter.consume(key as never);
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await limiter.consume(key as never);
  const c = process.cpuUsage(c0);
  const wall = Number(process.hrtime.bigint() - t0) / 1000 / n;
  await limiter.close();
  return { wall, cpu: (c.user + c.system) / n };
}

const redis = VARIANTS.includes('redis') ? await startRedis() : null;
redisUrl = redis?.url ?? '';
const rps: Record<Variant, number[]> = { off: [], memory: [], sqlite: [], redis: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const variant of VARIANTS) {
    const dir = mkdtempSync(join(tmpdir(), `vls-limits-${variant}-`));
    const s = await serve(variant, dir);
    const request = { method: 'GET', path: '/api/v1/bic/DEUTDEFF', headers: { 'x-api-key': s.key } };
    await runLoadInChild({ url: s.url, requests: [request], connections: 16, durationS: 2 }); // warm-up
    const m = await runLoadInChild({ url: s.url, requests: [request], connections: 16, durationS: SECONDS });
    await s.close();
    rmSync(dir, { recursive: true, force: true });
    if (m.non2xx + m.errors > 0) throw new Error(`${variant}: ${m.non2xx} non-2xx, ${m.errors} errors`);
    rps[variant].push(m.rps);
    process.stdout.write(`round ${round + 1} ${variant.padEnd(6)} ${m.rps.toFixed(0)} req/s  p99 ${m.p99.toFixed(2)} ms\n`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const v of ROUNDS > 0 ? VARIANTS.filter((x) => x !== 'off') : []) {
  process.stdout.write(`${v}: median ${median(rps[v]).toFixed(0)} req/s = ${(median(rps[v]) / median(rps.off)).toFixed(2)}x limits off\n`);
}
for (const v of VARIANTS.filter((x) => x !== 'off')) {
  const dir = mkdtempSync(join(tmpdir(), `vls-limits-${v}-`));
  const { wall, cpu } = await perConsume(v, dir, CONSUMES);
  process.stdout.write(`${v}: ${wall.toFixed(2)} us wall, ${cpu.toFixed(2)} us CPU per consume (no HTTP)\n`);
  rmSync(dir, { recursive: true, force: true });
}
await redis?.stop();
process.exit(0);
