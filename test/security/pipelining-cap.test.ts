// A cap on pipelined requests waiting on one connection (RFC 9112 §9.3.2): the answers ahead, then one refusal, then close.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { MAX_PIPELINED_REQUESTS } from '../../src/server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { listenOnLoopback, type Listening } from '../support/listening.js';

let h: Harness;
let served: Listening;
let port: number;

beforeAll(async () => {
  h = await startHarness();
  served = await listenOnLoopback(await createApp(h.composition.deps));
  port = served.port;
});
afterAll(async () => {
  await served.close();
  await h.close();
});

interface Answer {
  status: number;
  head: string;
  body: string;
}

/** Split a byte stream of HTTP/1.1 responses (each with Content-Length) into answers. */
function answers(raw: string): Answer[] {
  const out: Answer[] = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, end);
    const length = Number(/^content-length: (\d+)$/im.exec(head)?.[1] ?? 0);
    out.push({ status: Number(head.slice(9, 12)), head, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

const GET = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';

/**
 * Write `batches` one after the other on one connection, each once every answer to the one before has arrived;
 * resolve with every answer once the server closes the connection, or `quietMs` after the last answer expected (or
 * one saying `Connection: close`): a state, so a server slowed between two answers is waited for.
 */
function converse(batches: number[], quietMs = 700): Promise<{ answers: Answer[]; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let raw = '';
    let sent = 0;
    let batch = 0;
    let quiet: NodeJS.Timeout | undefined;
    let closedByServer = true;
    const next = () => {
      if (batch >= batches.length) return;
      sent += batches[batch];
      sock.write(GET.repeat(batches[batch++]));
    };
    sock.on('connect', next);
    sock.on('data', (d) => {
      raw += d.toString('latin1');
      clearTimeout(quiet);
      const got = answers(raw);
      if (got.length === sent) next();
      const last = got.at(-1);
      if (batch >= batches.length && (got.length === sent || (last && /^connection: close$/im.test(last.head)))) {
        quiet = setTimeout(() => {
          closedByServer = false;
          sock.destroy();
        }, quietMs);
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(quiet);
      resolve({ answers: answers(raw), closedByServer });
    });
  });
}

describe(`at most ${MAX_PIPELINED_REQUESTS} pipelined requests wait on one connection`, () => {
  it(`answers ${MAX_PIPELINED_REQUESTS} pipelined requests and keeps the connection`, async () => {
    const { answers: got, closedByServer } = await converse([MAX_PIPELINED_REQUESTS]);
    expect(got.map((a) => a.status)).toEqual(Array(MAX_PIPELINED_REQUESTS).fill(200));
    expect(closedByServer).toBe(false);
  });

  it('never refuses a client that waits for its answers before pipelining more', async () => {
    const { answers: got } = await converse([MAX_PIPELINED_REQUESTS, MAX_PIPELINED_REQUESTS, MAX_PIPELINED_REQUESTS]);
    expect(got.map((a) => a.status)).toEqual(Array(3 * MAX_PIPELINED_REQUESTS).fill(200));
  });

  it('answers the requests ahead in order, refuses the next with 503 ErrorInfo and Connection: close, and closes', async () => {
    const { answers: got, closedByServer } = await converse([MAX_PIPELINED_REQUESTS + 40]);
    expect(got.map((a) => a.status)).toEqual([...Array(MAX_PIPELINED_REQUESTS).fill(200), 503]);
    const refusal = got[MAX_PIPELINED_REQUESTS];
    expect(refusal.head).toMatch(/^connection: close$/im);
    expect(refusal.head).toMatch(/^content-type: application\/json/im);
    expect(JSON.parse(refusal.body)).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', path: '/healthz' });
    expect(JSON.parse(refusal.body).message).toMatch(/pipelined/);
    expect(closedByServer).toBe(true);
  });

  it('is the number openapi.yaml states', () => {
    const spec = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(spec).toContain(`a request pipelined behind ${MAX_PIPELINED_REQUESTS} others still unanswered`);
  });

  it('still serves a new connection afterwards', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
