// A real redis-server for tests (RESP over TCP on 127.0.0.1, free port, no persistence), started and stopped per suite.
//
// Usage:
//   const HAVE_REDIS = redisAvailable();           // always true: Redis is a required test component
//   describe.skipIf(!HAVE_REDIS)('...', () => {
//     let redis: TestRedis;
//     beforeAll(async () => { redis = await startRedisServer(); });
//     afterAll(() => redis?.stop());
//     redis.url; await redis.kill(); await redis.start();   // kill -9 and start again on the same port
//   });
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { waitFor } from './wait.js';

const BINARY = process.env.REDIS_SERVER_BIN ?? 'redis-server';

export interface TestRedis {
  port: number;
  url: string;
  /** Start again on the same port (after kill or stop); resolves when it answers PING. */
  start(): Promise<void>;
  /** SIGKILL: the connections drop at once, like a crashed server. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export function redisBinaryPresent(): boolean {
  const r = spawnSync(BINARY, ['--version'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

/**
 * Whether Redis tests run here: always. Redis is a real component of the service like the DNS and TLS servers, so
 * a machine without the binary fails those tests (startRedisServer says how to install it) instead of skipping
 * them silently; only the browser tests may skip, and only outside CI.
 */
export function redisAvailable(): boolean {
  return true;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let data = '';
    const finish = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => finish(false));
    sock.once('error', () => finish(false));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.includes('\r\n')) finish(data.startsWith('+PONG'));
    });
  });
}

async function waitForPing(port: number, child: ChildProcess): Promise<void> {
  await waitFor(() => ping(port), {
    intervalMs: 25,
    what: `redis-server answering PING on port ${port}`,
    giveUp: () => (child.exitCode !== null || child.signalCode !== null) && `redis-server exited (${child.exitCode ?? child.signalCode})`,
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * The command timeout for clients of a Redis that is up: a deadline for a starved machine, where a big command can
 * wait its turn for longer than the service's own 500 ms (src/adapters/redis/redis-client.ts), which stays for the
 * tests whose subject is an outage or a hang.
 */
export const COMMAND_TIMEOUT_MS = 10_000;

export async function startRedisServer(): Promise<TestRedis> {
  if (!redisBinaryPresent()) throw new Error(`redis-server not found (${BINARY}); install it: apt-get install -y redis-server`);
  const port = await freePort();
  let child: ChildProcess | null = null;
  let log = '';

  const start = async (): Promise<void> => {
    if (child) throw new Error('redis-server already running');
    const c = spawn(
      BINARY,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--loglevel', 'warning'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = c;
    c.stdout!.on('data', (d) => (log += d));
    c.stderr!.on('data', (d) => (log += d));
    c.once('exit', () => {
      if (child === c) child = null;
    });
    try {
      await waitForPing(port, c);
    } catch (err) {
      c.kill('SIGKILL');
      throw new Error(`${(err as Error).message}\n${log}`);
    }
  };
  const signal = async (sig: NodeJS.Signals): Promise<void> => {
    const c = child;
    if (!c) return;
    c.kill(sig);
    await exited(c);
    child = null;
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    kill: () => signal('SIGKILL'),
    stop: () => signal('SIGTERM'),
  };
}
