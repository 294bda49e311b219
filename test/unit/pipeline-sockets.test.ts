// What needs a socket: a reply sent before the request body was read closes the connection instead of reading on.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  // TCP: the subject is the connection (a reply before the body was read closes it).
  h = await startHarness({}, { tcp: true });
});
afterAll(() => h.close());

interface Trickled {
  head: string;
  /** When the server closed the connection, in ms after the request head was sent; null if it kept it open. */
  closedAfterMs: number | null;
}

/**
 * Send a request head announcing a body, then one byte every 100 ms; watch for the answer and the close (at most 20 s,
 * a deadline for a starved machine: the 1000-byte body would take 100 s, the request timeout 31 s).
 */
function trickle(head: string[]): Promise<Trickled> {
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(new URL(h.url).port), '127.0.0.1');
    const started = Date.now();
    let received = '';
    let timer: NodeJS.Timeout;
    const done = (closedAfterMs: number | null) => {
      clearInterval(timer);
      clearTimeout(limit);
      socket.destroy();
      resolve({ head: received.split('\r\n\r\n')[0], closedAfterMs });
    };
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('close', () => done(Date.now() - started));
    socket.on('error', () => undefined);
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    timer = setInterval(() => socket.writable && socket.write('x'), 100);
    const limit = setTimeout(() => done(null), 20_000);
  });
}

describe('a reply before the body was read', () => {
  it.each([
    ['401 (no key)', ['POST /api/v1/creditcard/validate HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Content-Length: 1000']],
    ['404 (unknown path)', ['POST /api/v1/nowhere HTTP/1.1', 'Host: x', 'Content-Length: 1000']],
    ['413 (declared too large)', ['POST /api/v1/password/strength HTTP/1.1', 'Host: x', 'X-Api-Key: KEY', 'Content-Type: application/json', 'Content-Length: 4294967296']],
    ['/healthz', ['GET /healthz HTTP/1.1', 'Host: x', 'Content-Length: 1000']],
  ])('%s: answered with Connection: close, and the connection closed at once rather than read for 31 s', async (_what, head) => {
    const res = await trickle(head.map((l) => l.replace('KEY', h.key)));
    expect(res.head).toMatch(/^HTTP\/1\.1 (401|404|413|200) /);
    expect(res.head).toMatch(/\r\nconnection: close/i);
    // Closed by the server while the 1000-byte body was still trickling in (one byte per 100 ms), not held open.
    expect(res.closedAfterMs).not.toBeNull();
  });

  it('keeps the connection open when the whole body had arrived (Node discards it)', async () => {
    const port = Number(new URL(h.url).port);
    const body = '{"cardNumber":"4012888888881881"}';
    const answers = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (d) => {
        received += d.toString('latin1');
        if ((received.match(/HTTP\/1\.1 /g) ?? []).length === 2) {
          socket.destroy();
          resolve(received);
        }
      });
      const request = `POST /api/v1/creditcard/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      socket.write(request + `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    });
    expect(answers).toMatch(/^HTTP\/1\.1 401 /);
    expect(answers).toMatch(/HTTP\/1\.1 200 /);
    expect(answers).not.toMatch(/connection: close/i);
  });
});
