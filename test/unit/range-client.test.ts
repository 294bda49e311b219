// Range client against a real local range server: k-anonymity request shape, padding, cache, mirror, failures.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRangeClient, parseRange } from '../../src/adapters/password/range-client.js';
import { resolverLookup } from '../../src/adapters/dns/lookup.js';
import { createDnsResolver } from '../../src/adapters/dns/resolver.js';
import { startDnsServer } from '../support/dns-server.js';
import { waitFor } from '../support/wait.js';
import { UpstreamFailure, type ApiError } from '../../src/errors.js';
import { asApiError } from '../../src/error-answers.js';

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

type Responder = (url: string, res: ServerResponse) => void;

interface RangeServer {
  baseUrl: string;
  requests: Recorded[];
  respond: Responder;
  close(): Promise<void>;
}

async function startRangeServer(): Promise<RangeServer> {
  const hanging: ServerResponse[] = [];
  const state: RangeServer = {
    baseUrl: '',
    requests: [],
    respond: (_url, res) => {
      res.writeHead(404).end();
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    state.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    hanging.push(res);
    state.respond(req.url ?? '', res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

const sha1 = (s: string): string => createHash('sha1').update(s, 'utf8').digest('hex').toUpperCase();
const PASSWORD = 'hunter2-range-test';
const HASH = sha1(PASSWORD);
const PREFIX = HASH.slice(0, 5);
const SUFFIX = HASH.slice(5);

/** A padded answer like the real service's: real rows plus padding rows with count 0. */
function rangeBody(rows: Array<[string, number]>, padding = 5): string {
  const lines = rows.map(([suffix, count]) => `${suffix}:${count}`);
  for (let i = 0; i < padding; i += 1) lines.push(`${sha1(`pad-${i}`).slice(5)}:0`);
  return lines.join('\r\n');
}

const text = (body: string): Responder => (_url, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
};

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamFailure);
  return asApiError(err) as ApiError;
}

let server: RangeServer;

beforeEach(async () => {
  server = await startRangeServer();
});

afterEach(async () => {
  await server.close();
});

const client = (extra: Partial<Parameters<typeof createRangeClient>[0]> = {}) =>
  createRangeClient({ baseUrl: server.baseUrl, timeoutMs: 2_000, ...extra });

describe('request shape (k-anonymity)', () => {
  it('sends exactly one GET /range/{5 upper-case hex} with Add-Padding: true and nothing else', async () => {
    server.respond = text(rangeBody([]));
    await client().range(PREFIX);
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req.method).toBe('GET');
    expect(req.url).toMatch(/^\/range\/[0-9A-F]{5}$/);
    expect(req.url).toBe(`/range/${PREFIX}`);
    expect(req.headers['add-padding']).toBe('true');
  });

  it('keeps a base URL path and trailing slash out of the way', async () => {
    server.respond = text(rangeBody([]));
    await createRangeClient({ baseUrl: `${server.baseUrl}/`, timeoutMs: 2_000 }).range(PREFIX);
    expect(server.requests.map((r) => r.url)).toEqual([`/range/${PREFIX}`]);
  });

  it.each(['5baa6', '5BAA', '5BAA61', 'GHIJK', '', '../..', '5BAA6\n'])(
    'rejects the prefix %j before any request',
    async (bad) => {
      await expect(client().range(bad)).rejects.toThrow(TypeError);
      expect(server.requests).toHaveLength(0);
    },
  );
});

describe('name resolution', () => {
  it('resolves the range host through the given lookup (DNS_SERVERS), not the system resolver', async () => {
    const dns = await startDnsServer({ 'range.test': [{ type: 'A', data: '127.0.0.1' }] });
    try {
      const resolver = createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 5000 });
      server.respond = text(rangeBody([[SUFFIX, 3]]));
      const port = new URL(server.baseUrl).port;
      const range = await createRangeClient({ baseUrl: `http://range.test:${port}`, timeoutMs: 2_000, lookup: resolverLookup(resolver) }).range(PREFIX);
      expect(range.get(SUFFIX)).toBe(3);
      expect(dns.queries.map((q) => `${q.type} ${q.name}`)).toContain('A range.test');
      expect(server.requests[0].headers.host).toBe(`range.test:${port}`);
    } finally {
      await dns.close();
    }
  });

  it('answers 502 when the range host does not resolve', async () => {
    const dns = await startDnsServer({});
    try {
      const resolver = createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 5000 });
      const err = await rejection(createRangeClient({ baseUrl: 'http://missing.test', timeoutMs: 2_000, lookup: resolverLookup(resolver) }).range(PREFIX));
      expect(err).toMatchObject({ status: 502, code: 'UPSTREAM_UNAVAILABLE' });
    } finally {
      await dns.close();
    }
  });
});

describe('answers', () => {
  it('returns the count of a breached suffix', async () => {
    server.respond = text(rangeBody([[SUFFIX, 4242], [sha1('other').slice(5), 7]]));
    const range = await client().range(PREFIX);
    expect(range.get(SUFFIX)).toBe(4242);
  });

  it('has no entry for a suffix that is not breached', async () => {
    server.respond = text(rangeBody([[sha1('other').slice(5), 7]]));
    const range = await client().range(PREFIX);
    expect(range.has(SUFFIX)).toBe(false);
  });

  it('drops padding rows with count 0, even for the looked-up suffix', async () => {
    server.respond = text(rangeBody([[SUFFIX, 0], [sha1('other').slice(5), 7]], 20));
    const range = await client().range(PREFIX);
    expect(range.has(SUFFIX)).toBe(false);
    expect([...range.values()]).toEqual([7]);
  });

  it('upper-cases suffixes and accepts LF line ends', async () => {
    server.respond = text(`${SUFFIX.toLowerCase()}:3\n`);
    expect((await client().range(PREFIX)).get(SUFFIX)).toBe(3);
  });
});

describe('cache', () => {
  it('answers a second lookup of one prefix from the cache (one request)', async () => {
    server.respond = text(rangeBody([[SUFFIX, 1]]));
    const c = client();
    await c.range(PREFIX);
    const again = await c.range(PREFIX);
    expect(again.get(SUFFIX)).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(c.stats()).toEqual({ hits: 1, misses: 1, size: 1 });
  });

  it('coalesces concurrent lookups of one prefix into one request', async () => {
    const held: ServerResponse[] = [];
    server.respond = (_url, res) => held.push(res);
    const c = client();
    const pending = Array.from({ length: 5 }, () => c.range(PREFIX));
    // expect.poll's default deadline is 1 s, short for an HTTP round trip on a starved host: the house deadline instead.
    await waitFor(() => held.length > 0, { what: 'the request at the server' });
    expect(held).toHaveLength(1);
    held[0].writeHead(200).end(rangeBody([[SUFFIX, 9]]));
    const ranges = await Promise.all(pending);
    expect(ranges.map((r) => r.get(SUFFIX))).toEqual([9, 9, 9, 9, 9]);
    expect(server.requests).toHaveLength(1);
    expect(c.stats()).toMatchObject({ misses: 1, hits: 4 });
  });

  it('evicts the least recently used prefix beyond cacheEntries', async () => {
    server.respond = text(rangeBody([]));
    const c = client({ cacheEntries: 2 });
    for (const p of ['00000', '11111', '22222', '00000']) await c.range(p);
    expect(server.requests.map((r) => r.url)).toEqual(['/range/00000', '/range/11111', '/range/22222', '/range/00000']);
    expect(c.stats().size).toBe(2);
  });

  it('does not cache a failure', async () => {
    server.respond = (_url, res) => res.writeHead(503).end();
    const c = client();
    await rejection(c.range(PREFIX));
    server.respond = text(rangeBody([[SUFFIX, 2]]));
    expect((await c.range(PREFIX)).get(SUFFIX)).toBe(2);
    expect(server.requests).toHaveLength(2);
  });
});

describe('mirror directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'range-mirror-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads {PREFIX}.txt and makes no HTTP request', async () => {
    await writeFile(join(dir, `${PREFIX}.txt`), rangeBody([[SUFFIX, 77]]));
    const range = await client({ mirrorDir: dir }).range(PREFIX);
    expect(range.get(SUFFIX)).toBe(77);
    expect(server.requests).toHaveLength(0);
  });

  it('treats a missing file as an empty range, still without a request', async () => {
    const range = await client({ mirrorDir: dir }).range(PREFIX);
    expect(range.size).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('answers 502 for a malformed mirror file', async () => {
    await writeFile(join(dir, `${PREFIX}.txt`), 'not a range file');
    const err = await rejection(client({ mirrorDir: dir }).range(PREFIX));
    expect(err.status).toBe(502);
  });
});

describe('failures → 502 UPSTREAM_UNAVAILABLE without internals', () => {
  const expectUpstream = (err: ApiError, port?: string) => {
    expect(err.status).toBe(502);
    expect(err.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(err.message).toBe('breached-password range service unavailable');
    expect(err.details).toEqual([]);
    if (port) expect(JSON.stringify({ m: err.message, d: err.details })).not.toContain(port);
  };

  it('on timeout (the server got the request and never answers)', async () => {
    // The client's one timer is AbortSignal.timeout(timeoutMs), which vitest's fake timers do not reach: this stands
    // in for it, and the test fires it once the server holds the request. A wall-clock 150 ms ran out on a loaded
    // host before the server even saw the request, and measured the machine instead of the timeout.
    const timer = new AbortController();
    const timeout = vi.spyOn(AbortSignal, 'timeout').mockReturnValue(timer.signal);
    try {
      let got!: () => void;
      const held = new Promise<void>((resolve) => (got = resolve));
      server.respond = () => got();
      const logged: unknown[] = [];
      const pending = rejection(client({ timeoutMs: 150, logger: { warn: (obj) => logged.push(obj) } }).range(PREFIX));
      await held;
      expect(timeout).toHaveBeenCalledWith(150);
      timer.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
      expectUpstream(await pending);
      expect(logged).toEqual([{ kind: 'timeout', source: 'network' }]);
      expect(server.requests).toHaveLength(1);
    } finally {
      timeout.mockRestore();
    }
  });

  it.each([500, 502, 503, 429, 404])('on HTTP %i', async (status) => {
    server.respond = (_url, res) => res.writeHead(status).end('oops');
    expectUpstream(await rejection(client().range(PREFIX)));
  });

  it('on a refused connection', async () => {
    const closed = await startRangeServer();
    const url = closed.baseUrl;
    await closed.close();
    const err = await rejection(createRangeClient({ baseUrl: url, timeoutMs: 2_000 }).range(PREFIX));
    expectUpstream(err, url.split(':').pop());
  });

  it.each([
    ['prose', 'Service temporarily down, try later'],
    ['short suffix', 'ABCDEF:12'],
    ['non-hex suffix', `${'Z'.repeat(35)}:1`],
    ['missing count', `${SUFFIX}:`],
    ['negative count', `${SUFFIX}:-4`],
  ])('on a malformed body (%s)', async (_name, body) => {
    server.respond = text(body);
    expectUpstream(await rejection(client().range(PREFIX)));
  });

  it('on a redirect, without following it anywhere', async () => {
    const elsewhere = await startRangeServer();
    try {
      server.respond = (_url, res) => res.writeHead(302, { location: `${elsewhere.baseUrl}/range/${PREFIX}` }).end();
      expectUpstream(await rejection(client().range(PREFIX)));
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('logs only the kind of failure', async () => {
    const logged: unknown[] = [];
    server.respond = (_url, res) => res.writeHead(503).end();
    await rejection(client({ logger: { warn: (obj, msg) => logged.push([obj, msg]) } }).range(PREFIX));
    expect(logged).toEqual([[{ kind: 'status 503', source: 'network' }, 'range lookup failed']]);
  });
});

describe('parseRange', () => {
  it('maps suffix to count and skips blank lines', () => {
    expect(parseRange(`${SUFFIX}:5\r\n\r\n${'A'.repeat(35)}:0\r\n`)).toEqual(new Map([[SUFFIX, 5]]));
  });
});
