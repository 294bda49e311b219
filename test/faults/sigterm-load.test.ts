// SIGTERM during a burst of concurrent requests on the real server process: every accepted request completes, exit code 0.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteKeyStore } from '../../src/adapters/keys/sqlite-key-store.js';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { createHttpServer, drain, listen } from '../../src/server.js';
import { GEOIP_TEST_DIR } from '../support/harness.js';
import { waitFor } from '../support/wait.js';
import { startFaultyDns, type FaultyDns } from './fault-upstreams.js';
import { startUpstreams, validRequests, type OperationRequest, type Upstreams } from './fixtures.js';

const SLOW_DNS_MS = 1500;
const SLOW = 16; // email validations (3 DNS questions each) held SLOW_DNS_MS by the DNS relay
const FAST = 144;

let up: Upstreams;
let dnsRelay: FaultyDns;
let dataDir: string;
let key: string;
let child: ChildProcess | null = null;

beforeAll(async () => {
  up = await startUpstreams();
  dnsRelay = await startFaultyDns(up.dns.port);
  dataDir = mkdtempSync(join(tmpdir(), 'vls-sigterm-'));
  const store = createSqliteKeyStore(openDatabase(dataDir));
  key = (await store.create({ name: 'burst' })).key;
  await store.close();
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await dnsRelay.close();
  await up.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function startServer(): Promise<{ port: number; exit: Promise<number | null> }> {
  const c = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      ...up.env,
      DNS_SERVERS: `127.0.0.1:${dnsRelay.port}`,
      DNS_TIMEOUT_MS: '5000',
      // The subject is the drain, not upstream timeouts: a starved machine must not turn the burst's checks into 502s.
      PWNED_TIMEOUT_MS: '5000',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      GEOIP_CITY_DB: join(GEOIP_TEST_DIR, 'GeoIP2-City-Test.mmdb'),
      GEOIP_ASN_DB: join(GEOIP_TEST_DIR, 'GeoLite2-ASN-Test.mmdb'),
      RATE_LIMIT_PER_MINUTE: '100000',
      PASSWORD_THREADS: '1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = c;
  const exit = new Promise<number | null>((r) => c.once('exit', (code) => r(code)));
  let out = '';
  c.stdout!.on('data', (d) => (out += d));
  c.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 30_000);
    c.stdout!.on('data', () => {
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), exit });
      }
    });
    void exit.then((code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
}

interface Outcome {
  operationId: string;
  connected: boolean;
  status: number;
  error: string | null;
  doneAt: number;
}

/** One request on a connection of its own (no keep-alive), recording whether its connection was established. */
function send(port: number, r: OperationRequest): { outcome: Outcome; done: Promise<Outcome> } {
  const outcome: Outcome = { operationId: r.operationId, connected: false, status: 0, error: null, doneAt: 0 };
  const done = new Promise<Outcome>((resolve) => {
    const finish = () => {
      outcome.doneAt = performance.now();
      resolve(outcome);
    };
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: r.method,
      path: r.path,
      agent: false,
      headers: { ...r.headers, 'x-api-key': key, connection: 'close' },
    });
    req.on('socket', (s) => s.once('connect', () => (outcome.connected = true)));
    req.on('response', (res) => {
      outcome.status = res.statusCode ?? 0;
      res.resume();
      res.on('end', finish);
      res.on('error', (e: NodeJS.ErrnoException) => {
        outcome.error = e.code ?? e.message;
        finish();
      });
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      outcome.error = e.code ?? e.message;
      finish();
    });
    req.end(r.body);
  });
  return { outcome, done };
}

describe('SIGTERM during a load run', () => {
  it('completes every request accepted before the signal, then exits 0', { timeout: 90_000 }, async () => {
    const server = await startServer();
    // Warm every operation once (worker threads, caches), so the burst measures the drain, not start-up.
    for (const r of validRequests()) await send(server.port, r).done;

    dnsRelay.mode = 'slow';
    dnsRelay.delayMs = SLOW_DNS_MS;
    const slowNames = Array.from({ length: SLOW }, (_, i) => `slow-${i}.ok.test`);
    for (const n of slowNames) up.dns.set(n, [{ type: 'A', data: '192.0.2.9' }]);
    const fastOps = validRequests().filter((r) => !['lookupDns', 'validateEmail', 'inspectTlsCertificate'].includes(r.operationId));
    const burst: OperationRequest[] = [
      ...slowNames.map((n) => ({ operationId: 'validateEmail', method: 'GET' as const, path: `/api/v1/email?address=jane@${n}` })),
      ...Array.from({ length: FAST }, (_, i) => {
        const r = fastOps[i % fastOps.length];
        return r.operationId === 'checkPasswordStrength' ? validRequests({ password: `burst-pw-${i}` }).find((x) => x.operationId === r.operationId)! : r;
      }),
    ];
    const sent = burst.map((r) => send(server.port, r));

    // Signal once every connection is established and every slow request is inside the server (its DNS query arrived).
    const deadline = Date.now() + 30_000;
    const inside = () => slowNames.every((n) => dnsRelay.names.includes(n));
    while (!(sent.every((s) => s.outcome.connected || s.outcome.doneAt > 0) && inside()) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(inside()).toBe(true);
    const signalledAt = performance.now();
    const completedBefore = sent.filter((s) => s.outcome.doneAt > 0).length;
    child!.kill('SIGTERM');

    const outcomes = await Promise.all(sent.map((s) => s.done));
    const failed = outcomes.filter((o) => o.error !== null || ![200, 404, 503].includes(o.status));
    expect(failed).toEqual([]);
    // The slow ones were in flight at the signal and were drained, not cut.
    const slow = outcomes.slice(0, SLOW);
    expect(slow.every((o) => o.status === 200 && o.doneAt > signalledAt)).toBe(true);
    expect(completedBefore).toBeLessThan(burst.length);
    // Refused only by the drain flag (503), never cut: the own-IP lookup from loopback is its documented 404.
    for (const o of outcomes) if (o.status === 404) expect(o.operationId).toBe('lookupOwnIp');
    expect(await server.exit).toBe(0);
  });
});

describe('drain (in process, deterministic)', () => {
  async function slowServer() {
    const app = new Koa();
    app.use(async (ctx) => {
      await new Promise((r) => setTimeout(r, 50));
      ctx.body = { ok: true };
    });
    const server = createHttpServer(app);
    await listen(server, 0, '127.0.0.1');
    return { server, port: (server.address() as AddressInfo).port };
  }

  it('answers connections the kernel accepted before the drain: none is reset', async () => {
    const { server, port } = await slowServer();
    const sent = Array.from({ length: 100 }, () => send(port, { operationId: 'x', method: 'GET', path: '/' }));
    // Client and server share this event loop: once every client has connected, the connections wait in the
    // listener's accept queue, not yet seen by the server; closing the listener now would reset them.
    while (!sent.every((s) => s.outcome.connected)) await new Promise((r) => setImmediate(r));
    const how = drain(server, 5000);
    const outcomes = await Promise.all(sent.map((s) => s.done));
    expect(outcomes.filter((o) => o.error !== null)).toEqual([]);
    expect(outcomes.every((o) => o.status === 200)).toBe(true);
    expect(await how).toBe('drained');
  });

  it('closes a connection that never sends a request (after a short grace) and resolves', async () => {
    const { server, port } = await slowServer();
    const silent = net.connect(port, '127.0.0.1');
    silent.on('error', () => undefined);
    await new Promise((r) => silent.once('connect', r));
    const closed = new Promise((r) => silent.once('close', r));
    expect(await drain(server, 5000)).toBe('drained');
    await closed;
  });

  it('closes an idle keep-alive connection and resolves', async () => {
    const { server, port } = await slowServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const res = await new Promise<http.IncomingMessage>((resolve) => http.get({ host: '127.0.0.1', port, path: '/', agent }, resolve));
    res.resume();
    await new Promise((r) => res.on('end', r));
    expect(res.headers.connection).toBe('keep-alive');
    expect(await drain(server, 5000)).toBe('drained');
    agent.destroy();
  });

  it('answers a request in flight at the drain, then closes its keep-alive connection', async () => {
    let arrived!: () => void;
    const inside = new Promise<void>((r) => (arrived = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const app = new Koa();
    app.use(async (ctx) => {
      arrived();
      await gate;
      ctx.body = { ok: true };
    });
    const server = createHttpServer(app);
    await listen(server, 0, '127.0.0.1');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const answered = new Promise<http.IncomingMessage>((resolve) =>
      http.get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/', agent }, resolve),
    );
    await inside;
    const how = drain(server, 5000);
    release();
    const res = await answered;
    const closed = new Promise((r) => res.socket.once('close', r));
    res.resume();
    expect(res.statusCode).toBe(200);
    expect(await how).toBe('drained');
    await closed; // by the server: the agent keeps it open otherwise
    agent.destroy();
  });

  it('cuts what is still open when the timeout passes, and says so', async () => {
    const app = new Koa();
    let received = false;
    app.use(async () => {
      received = true;
      return new Promise(() => undefined); // never answers
    });
    const server = createHttpServer(app);
    await listen(server, 0, '127.0.0.1');
    const req = http.get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/', agent: false });
    const failed = new Promise((r) => req.on('error', r));
    await waitFor(() => received, { what: 'the request in the app' });
    expect(await drain(server, 300)).toBe('timeout');
    expect(await failed).toBeInstanceOf(Error);
  });
});
