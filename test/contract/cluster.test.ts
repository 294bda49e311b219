// WORKERS: several processes share the port and one set of counters (the primary's on the embedded store, or Redis).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, startRedisServer, type TestRedis } from '../support/redis-server.js';

const HAVE_REDIS = redisAvailable();
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'vls-cluster-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `node src/main.ts` with WORKERS=2 and `env`; resolves once both workers listen, with the output so far. */
async function startWorkers(env: Record<string, string>): Promise<{ child: ChildProcess; out: () => string; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, WORKERS: '2', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 80_000;
  while (!/with 2 workers/.test(out) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const url = /listening on (http:\/\/[^ ]+) with/.exec(out)?.[1];
  if (!url) throw new Error(`WORKERS=2 did not start:\n${out}`);
  return { child, out: () => out, url };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exit;
}

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
      key = /^\s+(vls_\S+)$/m.exec(first.out())?.[1];
      expect(key).toBeDefined();
      const statuses = await calls(first.url, key!, 7);
      expect(statuses).toEqual(['200', '200', '200', '200', '200', '429 RATE_LIMIT_EXCEEDED', '429 RATE_LIMIT_EXCEEDED']);
    } finally {
      expect(await stop(first.child)).toBe(0);
    }
    const second = await startWorkers(env);
    try {
      // A fresh minute window, but five of the six daily requests were used before the restart.
      expect(await calls(second.url, key!, 2)).toEqual(['200', '429 DAILY_QUOTA_EXCEEDED']);
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  });

  describe.skipIf(!HAVE_REDIS)('on Redis', () => {
    let redis: TestRedis;
    let child: ChildProcess;
    let out = '';
    let err = '';
    beforeAll(async () => {
      redis = await startRedisServer();
      child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, WORKERS: '2', REDIS_URL: redis.url, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '5' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (err += d));
      const deadline = Date.now() + 80_000;
      while (!/with 2 workers/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    }, 90_000);
    afterAll(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await redis?.stop();
    });

    it('serves from two processes, prints the first key once, shares one limit, and exits 0 on SIGTERM', async () => {
      expect(out).toMatch(/with 2 workers/);
      // The first key goes to stderr, never into the stdout log stream.
      const key = /^\s+(vls_\S+)$/m.exec(err)?.[1];
      expect(key).toBeDefined();
      expect(err.match(/vls_/g)!.length).toBe(2); // the key line and the curl example: printed once
      expect(out).not.toMatch(/vls_/);
      const url = /listening on (http:\/\/[^ ]+) with/.exec(out)![1];
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        // A fresh connection each time, so both workers are reached.
        const res = await fetch(`${url}/api/v1/bic/DEUTDEFF`, { headers: { 'X-Api-Key': key!, Connection: 'close' } });
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(2);
      const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    });

    it('stops with exit 1 when the workers cannot boot, instead of forking the same failure forever', { timeout: 60_000 }, async () => {
      const run = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, WORKERS: '2', REDIS_URL: redis.url, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', GEOIP_CITY_DB: join(dataDir, 'absent.mmdb') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      run.stderr!.on('data', (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => (run.kill('SIGKILL'), resolve(null)), 50_000);
        run.once('exit', (c) => (clearTimeout(timer), resolve(c)));
      });
      expect(code).toBe(1);
      expect(stderr).toMatch(/configuration error: GEOIP_CITY_DB: .*absent\.mmdb: no such file or directory/);
      expect(stderr).toMatch(/could not start .*stopping/);
    });
  });
});
