// A request whose JSON body json-body-fast/ read whole never emits 'end' nor 'close' (nothing reads past its body):
// what relies on a request's life cycle still works. The keep-alive connection carries the next request, and a
// client that disconnects mid-request aborts clientGone's signal (the SMTP verifier's cancel), which watches the
// response, not the request.
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonBody } from '../../src/http/json-body.js';
import type { ApiState } from '../../src/http/state.js';
import { clientGone } from '../../src/operations/client-gone.js';
import { listenOnLoopback, type Listening } from '../support/listening.js';
import { waitFor } from '../support/wait.js';

interface Seen {
  readWhole: boolean;
  requestEvents: string[];
  aborted: boolean;
}
const seen: Seen[] = [];
/** Each request's own signal, so that a test can let a held request go. */
let release: () => void = () => undefined;

const app = new Koa();
app.use(async (ctx) => {
  (ctx.state as ApiState).bodyReadWhole = false;
  const record: Seen = { readWhole: false, requestEvents: [], aborted: false };
  seen.push(record);
  const req: IncomingMessage = ctx.req;
  for (const event of ['end', 'close', 'aborted']) req.on(event, () => record.requestEvents.push(event));
  // The API reads a body after the key check's promise: by then Node's parser has put a body of the same packet in
  // the request's buffer (the fork reads only what has arrived; koa-body would read the rest).
  await Promise.resolve();
  const body = (await readJsonBody(ctx)) as { hold?: boolean };
  record.readWhole = (ctx.state as ApiState).bodyReadWhole;
  const gone = clientGone(ctx)!;
  gone.addEventListener('abort', () => (record.aborted = true));
  // A held request waits for its client to go away (or for the test to let it go), like an SMTP verification.
  if (body.hold) await new Promise<void>((resolve) => ((release = resolve), gone.addEventListener('abort', () => resolve())));
  ctx.body = { ok: true };
});

let served: Listening;
beforeAll(async () => {
  served = await listenOnLoopback(app);
});
afterAll(() => served.close());

const post = (body: string) => `POST /x HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

async function connected(): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(served.port, '127.0.0.1');
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  return { socket, received: () => text };
}

describe('a body read whole by json-body-fast', () => {
  it('is read by the fork, answers, and the connection carries the next request', async () => {
    seen.length = 0;
    const { socket, received } = await connected();
    socket.write(post('{"a":1}'));
    await waitFor(() => received().includes('{"ok":true}'), { what: 'the first answer' });
    socket.write(post('{"a":2}'));
    await waitFor(() => received().split('{"ok":true}').length === 3, { what: 'the second answer on the same connection' });
    socket.destroy();
    expect(seen.map((s) => s.readWhole)).toEqual([true, true]);
    // The gap this file is about: the request stream never ends; nothing above waited for it.
    expect(seen.flatMap((s) => s.requestEvents).filter((e) => e === 'end')).toEqual([]);
    expect(seen.some((s) => s.aborted)).toBe(false);
  });

  it("aborts clientGone's signal when the client disconnects before the answer", async () => {
    seen.length = 0;
    const { socket } = await connected();
    socket.write(post('{"hold":true}'));
    await waitFor(() => seen[0]?.readWhole, { what: 'the held request read by the fork' });
    socket.destroy();
    await waitFor(() => seen[0].aborted, { what: 'the signal aborted by the disconnect' });
    expect(seen[0].readWhole).toBe(true);
  });

  it('does not abort the signal of a request answered in full', async () => {
    seen.length = 0;
    const { socket, received } = await connected();
    socket.write(post('{"hold":true}'));
    await waitFor(() => seen[0]?.readWhole, { what: 'the held request read by the fork' });
    release();
    await waitFor(() => received().includes('{"ok":true}'), { what: 'the answer' });
    socket.destroy();
    await once(socket, 'close');
    expect(seen[0].aborted).toBe(false);
  });
});
