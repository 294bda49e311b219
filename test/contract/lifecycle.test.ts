// Process lifecycle: first-start key, SIGTERM drains in-flight requests and exits 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../support/dns-server.js';
import { waitFor } from '../support/wait.js';

let dataDir: string;
let silentDns: Awaited<ReturnType<typeof startDnsServer>>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vls-life-'));
  silentDns = await startDnsServer({}, { mode: 'silent' });
});
afterAll(async () => {
  await silentDns.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function startServer(): Promise<{ child: ChildProcess; url: string; stdout: () => string; stderr: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DNS_SERVERS: `127.0.0.1:${silentDns.port}`,
      DNS_TIMEOUT_MS: '1500',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 45_000);
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/[^ ]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], stdout: () => out, stderr: () => err });
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
}

const exited = (child: ChildProcess) => new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

describe('server process', () => {
  // Each test starts real server processes: generous timeouts for a loaded 2-core machine.
  it('prints one key on first start, on stderr and never into the stdout log stream, and none on the next', { timeout: 120_000 }, async () => {
    const first = await startServer();
    const key = /^\s+(vls_\S+)$/m.exec(first.stderr())?.[1];
    expect(key).toBeDefined();
    expect(first.stderr()).toMatch(/X-Api-Key/);
    expect(first.stdout()).not.toMatch(/vls_|Created the first API key/);
    const res = await fetch(`${first.url}/api/v1/bic/DEUTDEFF`, { headers: { 'X-Api-Key': key! } });
    expect(res.status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await exited(first.child)).toBe(0);

    const second = await startServer();
    expect(second.stdout() + second.stderr()).not.toMatch(/vls_/);
    const again = await fetch(`${second.url}/api/v1/bic/DEUTDEFF`, { headers: { 'X-Api-Key': key! } });
    expect(again.status).toBe(200);
    second.child.kill('SIGINT');
    expect(await exited(second.child)).toBe(0);
  });

  it('on SIGTERM finishes the request in flight, refuses new connections, and exits 0', { timeout: 90_000 }, async () => {
    const server = await startServer();
    const { key } = await (async () => {
      const { createSqliteKeyStore } = await import('../../src/adapters/keys/sqlite-key-store.js');
      const { openDatabase } = await import('../../src/adapters/sqlite/database.js');
      const store = createSqliteKeyStore(openDatabase(dataDir));
      const created = await store.create({ name: 'drain' });
      await store.close();
      return created;
    })();
    // The server's key directory polls the store every 250 ms: wait until it lets the new key in.
    await waitFor(async () => (await fetch(`${server.url}/api/v1/bic/DEUTDEFF`, { headers: { 'X-Api-Key': key } })).status === 200, { timeoutMs: 10_000, intervalMs: 50, what: 'the new key accepted' });
    silentDns.queries.length = 0;
    const slow = fetch(`${server.url}/api/v1/dns/slow.test`, { headers: { 'X-Api-Key': key } });
    // In flight: its DNS query reached the silent server (which never answers).
    await waitFor(() => silentDns.queries.some((q) => q.name === 'slow.test'), { timeoutMs: 10_000, what: 'the DNS query of the request in flight' });
    const exit = exited(server.child);
    server.child.kill('SIGTERM');
    const res = await slow;
    expect(res.status).toBe(502); // the silent DNS server made it wait for its timeout: it was not cut off
    expect((await res.json()).code).toBe('UPSTREAM_UNAVAILABLE');
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    expect(await exit).toBe(0);
  });
});
