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

export interface TestSentinelGroup {
  /** The name the Sentinels monitor. */
  name: string;
  /** REDIS_SENTINELS: the three Sentinels' host:port list. */
  sentinels: string;
  primaryPort: number;
  replicaPort: number;
  /** SIGKILL the primary (a crash): the Sentinels then promote the replica. */
  killPrimary(): Promise<void>;
  /** The port of the primary the Sentinels name now. */
  currentPrimaryPort(): Promise<number>;
  stop(): Promise<void>;
}

/** A RESP command on a fresh connection: its reply, raw. */
function command(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let data = '';
    sock.setTimeout(2000, () => (sock.destroy(), reject(new Error('no reply'))));
    sock.once('error', reject);
    sock.once('connect', () => sock.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    sock.on('data', (chunk) => {
      data += chunk.toString('latin1');
      // Enough for the replies read here (a status, an integer, or an array of two bulk strings).
      if (/\r\n$/.test(data) && (!data.startsWith('*') || data.split('\r\n').length > 4)) {
        sock.destroy();
        resolve(data);
      }
    });
  });
}

/**
 * A primary, a replica and three Sentinels (`redis-server FILE --sentinel`, quorum 2, down after 1 s), all real
 * processes on loopback; resolves once every Sentinel knows the replica and the other two Sentinels.
 */
export async function startRedisSentinelGroup(dir: string): Promise<TestSentinelGroup> {
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const name = 'vls-primary';
  const children: ChildProcess[] = [];
  const run = async (args: string[], port: number) => {
    // In `dir`: a replica writes the RDB of its first sync to its working directory (never the checkout, where the
    // next test's redis-server would load it).
    const c = spawn(BINARY, args, { stdio: 'ignore', cwd: dir });
    children.push(c);
    await waitForPing(port, c);
    return c;
  };
  const base = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', '--dir', dir];
  const primaryPort = await freePort();
  const replicaPort = await freePort();
  const primary = await run(['--port', String(primaryPort), ...base, '--repl-diskless-sync-delay', '0'], primaryPort);
  await run(['--port', String(replicaPort), ...base, '--replicaof', '127.0.0.1', String(primaryPort)], replicaPort);
  // Replication starts with a full sync that the primary defers (repl-diskless-sync-delay, 5 s by default); a primary
  // killed before it has run leaves an empty replica to promote, so the group is ready only once the link is up.
  await waitFor(async () => (await command(replicaPort, 'ROLE')).includes('connected\r\n'), { what: 'the replica to finish its first sync', intervalMs: 100 });
  const sentinelPorts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const file = join(dir, `sentinel-${i}.conf`);
    writeFileSync(file, [`port ${port}`, 'bind 127.0.0.1', `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`, `sentinel down-after-milliseconds ${name} 1000`, `sentinel failover-timeout ${name} 5000`, ''].join('\n'));
    await run([file, '--sentinel'], port);
    sentinelPorts.push(port);
  }
  for (const port of sentinelPorts) {
    await waitFor(async () => {
      const replicas = await command(port, 'SENTINEL', 'REPLICAS', name);
      const others = await command(port, 'SENTINEL', 'SENTINELS', name);
      return replicas.startsWith('*1') && others.startsWith('*2');
    }, { what: 'the Sentinels to know the replica and each other', intervalMs: 100 });
  }
  return {
    name,
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    primaryPort,
    replicaPort,
    async killPrimary() {
      primary.kill('SIGKILL');
      await exited(primary);
    },
    async currentPrimaryPort() {
      const reply = await command(sentinelPorts[0], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name);
      return Number(reply.split('\r\n')[4]);
    },
    async stop() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(children.map(exited));
    },
  };
}
