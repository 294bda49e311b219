// Pipelined floods that read nothing and leave: memory stays bounded on a real server process (RFC 9112 §9.3.2).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { startChildServer, type ChildServer } from './child-server.js';

const MB = 1024 * 1024;
const ROUNDS = 30;
const CONNECTIONS = 20;
const PIPELINED = 1000;
/** Stop early well past the bound, so that a leaking server fails the test without exhausting the machine. */
const GIVE_UP_GROWTH = 400 * MB;

let server: ChildServer;

beforeAll(async () => {
  server = await startChildServer();
});
afterAll(async () => {
  await server?.stop();
});

/** One connection: PIPELINED requests in one write, nothing read, closed once the server has started answering. */
function floodAndLeave(port: number, path: string): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.on('error', () => undefined);
    sock.once('connect', () => {
      sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(PIPELINED));
      // The first bytes back mean the server has parsed the flood; nothing is read beyond them.
      sock.once('data', () => {
        sock.pause();
        setTimeout(() => sock.destroy(), 100);
      });
    });
    sock.once('close', () => resolve());
    setTimeout(() => sock.destroy(), 5000);
  });
}

/** The server's RSS once two readings 100 ms apart differ by under 1 MB (its connections closed, its garbage gone). */
async function steadyRss(): Promise<number> {
  let last = server.rss();
  return waitFor(() => {
    const now = server.rss();
    const steady = Math.abs(now - last) < MB;
    last = now;
    return steady ? now : null;
  }, { timeoutMs: 10_000, intervalMs: 100, what: 'a steady RSS' });
}

describe('a flood of pipelined requests on connections that read nothing', () => {
  it(`keeps RSS within 50 MB of the start after ${ROUNDS} rounds of ${CONNECTIONS} connections x ${PIPELINED} GET /openapi.json`, { timeout: 300_000 }, async () => {
    // Warm the route once, so that the baseline holds what serving it keeps anyway.
    expect((await fetch(`http://127.0.0.1:${server.port}/openapi.json`)).status).toBe(200);
    const start = await steadyRss();
    let rss = start;
    let rounds = 0;
    for (; rounds < ROUNDS && rss - start < GIVE_UP_GROWTH; rounds++) {
      await Promise.all(Array.from({ length: CONNECTIONS }, () => floodAndLeave(server.port, '/openapi.json')));
      rss = server.rss();
    }
    // Memory the flood held is returned once its connections are gone: wait for it within a deadline.
    rss = await waitFor(() => {
      const now = server.rss();
      return now - start < 50 * MB ? now : null;
    }, { timeoutMs: 10_000, intervalMs: 100, what: 'RSS back within 50 MB of the start' }).catch(() => server.rss());
    console.log(`RSS ${Math.round(start / MB)} MB at start, ${Math.round(rss / MB)} MB after ${rounds} rounds`);
    expect(rounds).toBe(ROUNDS);
    expect(rss - start).toBeLessThan(50 * MB);
    const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(health.status).toBe(200);
  });
});
