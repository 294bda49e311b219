// The server hands a request without a body (no Content-Length, no Transfer-Encoding) over already ended
// (optimizeEmptyRequests, docs/adr/0035), and a request with a body as a stream to read.
import type { RequestListener } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback, type Listening } from '../support/listening.js';

/** Answers how the request looked on arrival, then its body as read through the stream. */
const listener: RequestListener = (req, res) => {
  const endedOnArrival = req.readableEnded;
  res.setHeader('x-ended-on-arrival', String(endedOnArrival));
  const chunks: Buffer[] = [];
  const answer = () => res.end(JSON.stringify({ endedOnArrival, body: Buffer.concat(chunks).toString('utf8') }));
  if (endedOnArrival) return answer();
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', answer);
};

let served: Listening;
beforeAll(async () => {
  served = await listenOnLoopback({ callback: () => listener });
});
afterAll(() => served.close());

describe('requests without a body', () => {
  it.each(['GET', 'HEAD', 'DELETE'])('a %s without Content-Length arrives ended', async (method) => {
    const res = await fetch(`${served.url}/x`, { method });
    expect(res.headers.get('x-ended-on-arrival')).toBe('true');
    if (method !== 'HEAD') expect(await res.json()).toEqual({ endedOnArrival: true, body: '' });
  });

  it('a POST with a body arrives as a stream and is read whole', async () => {
    const res = await fetch(`${served.url}/x`, { method: 'POST', body: '{"cardNumber":"4111"}', headers: { 'content-type': 'application/json' } });
    expect(await res.json()).toEqual({ endedOnArrival: false, body: '{"cardNumber":"4111"}' });
  });

  it('a chunked body is read whole', async () => {
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('ab'));
        c.enqueue(new TextEncoder().encode('cd'));
        c.close();
      },
    });
    const res = await fetch(`${served.url}/x`, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(await res.json()).toEqual({ endedOnArrival: false, body: 'abcd' });
  });
});
