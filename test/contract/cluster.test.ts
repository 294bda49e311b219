// WORKERS: several processes share the port and one set of counters (the primary's on the embedded store, or Redis).
// @module-tag slow (left out of make test-fast): starts server processes
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, startRedisServer, type TestRedis } from '../support/redis-server.js';
import { runServerProcess, startServerProcess, type ServerProcess } from '../support/server-process.js';

const HAVE_REDIS = redisAvailable();
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'vls-cluster-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** The line of the primary once both workers listen. */
const TWO_WORKERS = /^listening on (http:\/\/\S+) with 2 workers/m;

/** `node src/main.ts` with WORKERS=2 and `env` on the shared DATA_DIR; resolves once both workers listen. */
const startWorkers = (env: Record<string, string>): Promise<ServerProcess> =>
  startServerProcess({ env: { WORKERS: '2', ...env }, dataDir, ready: TWO_WORKERS });

/** Statuses and codes of `n` requests, each on a fresh connection (so both workers are reached). */
async function calls(url: string, key: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/api/v1/bic/DEUTDEFF`, { headers: { 'X-Api-Key': key, Connection: 'close' } });
    const body = (await res.json()) as { code?: string };
    out.push(res.status === 200 ? '200' : `${res.status} ${body.code}`);
  }
  return out;
}

describe('WORKERS', () => {
  it('on the embedded store: the primary counts for both workers, and a restart keeps the daily count', { timeout: 180_000 }, async () => {
    const env = { RATE_LIMIT_PER_MINUTE: '5', QUOTA_PER_DAY: '6', REDIS_URL: '' };
    const first = await startWorkers(env);
    let key: string | undefined;
    try {
      key = /^\s+(vls_\S+)$/m.exec(first.output())?.[1];
      expect(key).toBeDefined();
      const statuses = await calls(first.url, key!, 7);
      expect(statuses).toEqual(['200', '200', '200', '200', '200', '429 RATE_LIMIT_EXCEEDED', '429 RATE_LIMIT_EXCEEDED']);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await startWorkers(env);
    try {
      // A fresh minute window, but five of the six daily requests were used before the restart.
      expect(await calls(second.url, key!, 2)).toEqual(['200', '429 DAILY_QUOTA_EXCEEDED']);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });

  describe.skipIf(!HAVE_REDIS)('on Redis', () => {
    let redis: TestRedis;
    let server: ServerProcess;
    beforeAll(async () => {
      redis = await startRedisServer();
      server = await startWorkers({ REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '5' });
    });
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await redis?.stop();
    });

    it('serves from two processes, prints the first key once, shares one limit, and exits 0 on SIGTERM', async () => {
      // The first key goes to stderr, never into the stdout log stream.
      const err = server.stderr();
      const key = /^\s+(vls_\S+)$/m.exec(err)?.[1];
      expect(key).toBeDefined();
      expect(err.match(/vls_/g)!.length).toBe(2); // the key line and the curl example: printed once
      expect(server.stdout()).not.toMatch(/vls_/);
      const url = server.url;
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        // A fresh connection each time, so both workers are reached.
        const res = await fetch(`${url}/api/v1/bic/DEUTDEFF`, { headers: { 'X-Api-Key': key!, Connection: 'close' } });
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(2);
      expect(await server.stop()).toBe(0);
    });

    it('stops with exit 1 when the workers cannot boot, instead of forking the same failure forever', { timeout: 180_000 }, async () => {
      const { code, stderr } = await runServerProcess({ env: { WORKERS: '2', REDIS_URL: redis.url, GEOIP_CITY_DB: join(dataDir, 'absent.mmdb') }, dataDir });
      expect(code).toBe(1);
      expect(stderr).toMatch(/configuration error: GEOIP_CITY_DB: .*absent\.mmdb: no such file or directory/);
      expect(stderr).toMatch(/could not start .*stopping/);
    });
  });
});
