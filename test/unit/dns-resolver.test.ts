// DNS resolver adapter against a real DNS server on 127.0.0.1: record types, TTLs, TCP fallback, failures, cache, coalescing.
import dns from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DnsAnswerCache } from '../../src/adapters/dns/cache.js';
import {
  createDnsResolver,
  parseDnsServer,
  resolveServerNames,
  systemDnsServers,
} from '../../src/adapters/dns/resolver.js';
import type { DnsRecord, DnsResolver, RecordType } from '../../src/adapters/dns/resolver.js';
import { UpstreamFailure } from '../../src/errors.js';
import { asApiError } from '../../src/error-answers.js';
import { startDnsServer } from '../support/dns-server.js';
import type { DnsServerMode, TestDnsServer, Zone } from '../support/dns-server.js';
import { waitFor } from '../support/wait.js';

const LONG_TXT = 'k='.padEnd(600, 'x');
const zone: Zone = {
  'example.test': [
    { type: 'A', data: '192.0.2.1', ttl: 300 },
    { type: 'A', data: '192.0.2.2', ttl: 120 },
    { type: 'AAAA', data: '2001:db8::1', ttl: 600 },
    { type: 'MX', data: { preference: 10, exchange: 'mx1.example.test' }, ttl: 3600 },
    { type: 'MX', data: { preference: 20, exchange: 'mx2.example.test' }, ttl: 3600 },
    { type: 'TXT', data: ['hello ', 'world'], ttl: 60 },
    { type: 'NS', data: 'ns1.example.test', ttl: 86400 },
    {
      type: 'SOA',
      ttl: 3600,
      data: {
        mname: 'ns1.example.test',
        rname: 'hostmaster.example.test',
        serial: 2024010101,
        refresh: 7200,
        retry: 900,
        expire: 1209600,
        minimum: 120,
      },
    },
  ],
  'www.example.test': [{ type: 'CNAME', data: 'example.test', ttl: 30 }],
  'v6.example.test': [
    { type: 'AAAA', data: '2001:0:0:1::1', ttl: 60 },
    { type: 'AAAA', data: '2001:db8:0:0:1:0:0:0', ttl: 60 },
    { type: 'AAAA', data: '::ffff:192.0.2.1', ttl: 60 },
  ],
  'mx1.example.test': [{ type: 'A', data: '192.0.2.25' }],
  'long.example.test': [{ type: 'TXT', data: LONG_TXT }],
  'big.example.test': Array.from({ length: 30 }, (_, i) => ({ type: 'TXT' as const, data: `record ${i} `.padEnd(80, '-') })),
  'zero.example.test': [{ type: 'A', data: '192.0.2.9', ttl: 0 }],
  'deep.sub.example.test': [{ type: 'A', data: '192.0.2.10' }],
};

let server: TestDnsServer;
const extra: TestDnsServer[] = [];

beforeAll(async () => {
  server = await startDnsServer(zone);
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  server.queries.length = 0;
  await Promise.all(extra.splice(0).map((s) => s.close()));
});

const at = (s: TestDnsServer) => ({ host: '127.0.0.1', port: s.port });
/** Generous: a loaded 2-core CI box can be slow to answer even on loopback; timeouts are tested with their own short ones. */
const resolverFor = (...servers: TestDnsServer[]): DnsResolver =>
  createDnsResolver({ servers: servers.map(at), timeoutMs: 2000 });
const withMode = async (mode: DnsServerMode): Promise<TestDnsServer> => {
  const s = await startDnsServer(zone, { mode });
  extra.push(s);
  return s;
};
const rec = (type: RecordType, name: string, value: string, ttl: number, priority: number | null = null): DnsRecord => ({
  type,
  name,
  value,
  ttl,
  priority,
});

describe('record types and TTLs', () => {
  it.each<[RecordType, DnsRecord[]]>([
    ['A', [rec('A', 'example.test', '192.0.2.1', 300), rec('A', 'example.test', '192.0.2.2', 120)]],
    ['AAAA', [rec('AAAA', 'example.test', '2001:db8::1', 600)]],
    [
      'MX',
      [rec('MX', 'example.test', 'mx1.example.test', 3600, 10), rec('MX', 'example.test', 'mx2.example.test', 3600, 20)],
    ],
    ['TXT', [rec('TXT', 'example.test', 'hello world', 60)]],
    ['NS', [rec('NS', 'example.test', 'ns1.example.test', 86400)]],
    ['SOA', [rec('SOA', 'example.test', 'ns1.example.test hostmaster.example.test 2024010101 7200 900 1209600 120', 3600)]],
  ])('%s records come with their values and TTLs', async (type, expected) => {
    const answer = await resolverFor(server).query('example.test', type);
    expect(answer).toEqual({ rcode: 'NOERROR', records: expected });
  });

  it('writes AAAA values as RFC 5952 text: the longest zero run shortened, IPv4-mapped with a dotted quad', async () => {
    const answer = await resolverFor(server).query('v6.example.test', 'AAAA');
    expect(answer.records.map((r) => r.value)).toEqual(['2001:0:0:1::1', '2001:db8:0:0:1::', '::ffff:192.0.2.1']);
  });

  it('returns a CNAME record for a CNAME question', async () => {
    const answer = await resolverFor(server).query('www.example.test', 'CNAME');
    expect(answer.records).toEqual([rec('CNAME', 'www.example.test', 'example.test', 30)]);
  });

  it('answers an A question through a CNAME with the target A records only', async () => {
    const answer = await resolverFor(server).query('www.example.test', 'A');
    expect(answer.records).toEqual([rec('A', 'example.test', '192.0.2.1', 300), rec('A', 'example.test', '192.0.2.2', 120)]);
  });

  it('joins the character-strings of a long TXT record without separator', async () => {
    const answer = await resolverFor(server).query('long.example.test', 'TXT');
    expect(answer.records.map((r) => r.value)).toEqual([LONG_TXT]);
  });

  it('ignores case and a trailing dot in the name', async () => {
    const answer = await resolverFor(server).query('EXAMPLE.Test.', 'AAAA');
    expect(answer.records.map((r) => r.value)).toEqual(['2001:db8::1']);
  });
});

describe('negative answers', () => {
  it('reports NXDOMAIN with no records', async () => {
    await expect(resolverFor(server).query('missing.example.test', 'A')).resolves.toEqual({ rcode: 'NXDOMAIN', records: [] });
  });

  it('reports NODATA as NOERROR with no records', async () => {
    await expect(resolverFor(server).query('mx1.example.test', 'MX')).resolves.toEqual({ rcode: 'NOERROR', records: [] });
  });

  it('treats an empty non-terminal as existing', async () => {
    await expect(resolverFor(server).query('sub.example.test', 'A')).resolves.toEqual({ rcode: 'NOERROR', records: [] });
  });
});

describe('transport', () => {
  it('retries over TCP when a UDP answer is too large and comes back truncated', async () => {
    const answer = await resolverFor(server).query('big.example.test', 'TXT');
    expect(answer.records).toHaveLength(30);
    expect(server.queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
  });

  it('retries over TCP when the server truncates every UDP answer', async () => {
    const s = await withMode('truncate');
    const answer = await resolverFor(s).query('example.test', 'MX');
    expect(answer.records.map((r) => r.value)).toEqual(['mx1.example.test', 'mx2.example.test']);
    expect(s.queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
  });

  it('uses a fresh random message id per query', async () => {
    const r = resolverFor(server);
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((l) => r.query(`${l}.example.test`, 'A')));
    expect(new Set(server.queries.map((q) => q.id)).size).toBeGreaterThan(1);
  });
});

describe('upstream failures', () => {
  const expectUpstreamError = async (p: Promise<unknown>): Promise<void> => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect(asApiError(err)).toMatchObject({ status: 502, code: 'UPSTREAM_UNAVAILABLE', message: 'DNS lookup failed' });
  };

  // A server that answers with a failure needs no short timeout (the answer ends the wait); one that never answers
  // usefully is waited for 150 ms. Under load that timer can fire before this process's server has read the query
  // (both share one event loop): the query is then read afterwards, so it is waited for, not counted at once.
  it.each<[DnsServerMode, number]>([
    ['silent', 150],
    ['servfail', 30_000],
    ['refused', 30_000],
    ['wrong-id', 150],
    ['wrong-question', 150],
  ])('a server in %s mode gives 502 UPSTREAM_UNAVAILABLE', async (mode, timeoutMs) => {
    const s = await withMode(mode);
    await expectUpstreamError(createDnsResolver({ servers: [at(s)], timeoutMs }).query('example.test', 'A'));
    await waitFor(() => s.queries.length > 0, { what: `the query at the ${mode} server` });
  });

  it('gives 502 when no server listens', async () => {
    const s = await startDnsServer(zone);
    await s.close();
    await expectUpstreamError(createDnsResolver({ servers: [at(s)], timeoutMs: 150 }).query('example.test', 'A'));
  });

  it.each([0, 70000])('gives 502, not an uncaught error, for a server on port %i', async (port) => {
    await expectUpstreamError(createDnsResolver({ servers: [{ host: '127.0.0.1', port }], timeoutMs: 150 }).query('example.test', 'A'));
  });

  it.each<DnsServerMode>(['silent', 'servfail'])('moves on to the next server when the first is %s', async (mode) => {
    const first = await withMode(mode);
    const answer = await resolverFor(first, server).query('example.test', 'AAAA');
    expect(answer.records.map((r) => r.value)).toEqual(['2001:db8::1']);
    expect(first.queries).toHaveLength(1);
  });

  it('rejects a name that cannot be sent', async () => {
    await expect(resolverFor(server).query(`${'x'.repeat(64)}.test`, 'A')).rejects.toThrow(TypeError);
    expect(server.queries).toHaveLength(0);
  });
});

describe('cache and coalescing', () => {
  it('answers a repeated query from the cache without a second upstream query', async () => {
    const r = resolverFor(server);
    const first = await r.query('example.test', 'MX');
    const second = await r.query('example.test', 'MX');
    expect(second.records.map((x) => x.value)).toEqual(first.records.map((x) => x.value));
    expect(server.queries).toHaveLength(1);
    expect(r.stats()).toEqual({ hits: 1, misses: 1, size: 1 });
  });

  it('shares the cache entry between spellings of the same name', async () => {
    const r = resolverFor(server);
    await r.query('example.test', 'A');
    await r.query('Example.TEST.', 'A');
    expect(server.queries).toHaveLength(1);
  });

  it('caches a negative answer', async () => {
    const r = resolverFor(server);
    await r.query('missing.example.test', 'A');
    await r.query('missing.example.test', 'A');
    expect(server.queries).toHaveLength(1);
  });

  it('does not cache an answer with TTL 0', async () => {
    const r = resolverFor(server);
    await r.query('zero.example.test', 'A');
    await r.query('zero.example.test', 'A');
    expect(server.queries).toHaveLength(2);
  });

  it('sends one upstream query for concurrent identical questions', async () => {
    const r = resolverFor(server);
    const answers = await Promise.all(Array.from({ length: 5 }, () => r.query('example.test', 'TXT')));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(server.queries).toHaveLength(1);
  });

  it('keeps at most cacheEntries answers, evicting the least recently used', async () => {
    const r = createDnsResolver({ servers: [at(server)], timeoutMs: 2000, cacheEntries: 2 });
    await r.query('example.test', 'A');
    await r.query('example.test', 'AAAA');
    await r.query('example.test', 'MX');
    await r.query('example.test', 'A');
    expect(r.stats().size).toBe(2);
    expect(server.queries.map((q) => q.type)).toEqual(['A', 'AAAA', 'MX', 'A']);
  });
});

describe('DnsAnswerCache', () => {
  const answer = { rcode: 'NOERROR' as const, records: [rec('A', 'a.test', '192.0.2.1', 100)] };

  it('reduces TTLs by the whole seconds an answer has been held', () => {
    let now = 0;
    const c = new DnsAnswerCache(10, () => now);
    c.set('k', answer, 100);
    now = 30_500;
    expect(c.get('k')?.records[0].ttl).toBe(70);
  });

  it('drops an answer once its TTL has passed', () => {
    let now = 0;
    const c = new DnsAnswerCache(10, () => now);
    c.set('k', answer, 100);
    now = 100_000;
    expect(c.get('k')).toBeUndefined();
  });

  it('keeps a negative answer without SOA for the short default', () => {
    let now = 0;
    const c = new DnsAnswerCache(10, () => now);
    c.set('k', { rcode: 'NXDOMAIN', records: [] }, undefined);
    now = 29_000;
    expect(c.get('k')).toEqual({ rcode: 'NXDOMAIN', records: [] });
    now = 30_000;
    expect(c.get('k')).toBeUndefined();
  });
});

describe('server configuration', () => {
  it.each([
    ['8.8.8.8', { host: '8.8.8.8', port: 53 }],
    ['127.0.0.1:5353', { host: '127.0.0.1', port: 5353 }],
    ['2001:4860:4860::8888', { host: '2001:4860:4860::8888', port: 53 }],
    ['[::1]:5353', { host: '::1', port: 5353 }],
    ['[::1]', { host: '::1', port: 53 }],
    [' 10.0.0.1 ', { host: '10.0.0.1', port: 53 }],
  ])('parses %s', (text, expected) => {
    expect(parseDnsServer(text)).toEqual(expected);
  });

  it.each(['', '1.2.3.4:0', '1.2.3.4:70000', '1.2.3.4:x', '127.0.0.1:abc', '[not-v6]:53', 'dns.example', 'localhost:5353', '[1.2.3.4]:53'])('rejects %j', (text) => {
    expect(parseDnsServer(text)).toBeNull();
  });

  it('looks a server name up once (localhost from /etc/hosts) and queries its address', async () => {
    const servers = await resolveServerNames([{ host: 'localhost', port: server.port }]);
    expect(servers.map((s) => s.host)).toContain('127.0.0.1');
    expect(servers.every((s) => s.port === server.port)).toBe(true);
    const resolver = createDnsResolver({ servers, timeoutMs: 2000 });
    expect((await resolver.query('example.test', 'A')).records).toHaveLength(2);
  });

  it.each([
    ['keeps addresses and puts IPv4 first, without duplicates',
      [{ host: '10.0.0.9', port: 53 }, { host: 'ns.corp', port: 5300 }, { host: 'ns2.corp', port: 5300 }],
      [{ host: '10.0.0.9', port: 53 }, { host: '192.0.2.7', port: 5300 }, { host: '2001:db8::7', port: 5300 }]],
  ])('%s', async (_, given, want) => {
    const lookup = async () => [{ address: '2001:db8::7', family: 6 }, { address: '192.0.2.7', family: 4 }];
    expect(await resolveServerNames(given, lookup)).toEqual(want);
  });

  it('rejects naming the host that does not resolve', async () => {
    const lookup = async (host: string) => {
      if (host === 'gone.corp') throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
      return [{ address: '192.0.2.7', family: 4 }];
    };
    await expect(resolveServerNames([{ host: 'ns.corp', port: 53 }, { host: 'gone.corp', port: 53 }], lookup)).rejects.toThrow(
      '"gone.corp" does not resolve (ENOTFOUND)',
    );
  });

  it('reads the system servers from node:dns', () => {
    const saved = dns.getServers();
    try {
      dns.setServers(['192.0.2.53', '[2001:db8::53]:5300', '127.0.0.1:5353']);
      expect(systemDnsServers()).toEqual([
        { host: '192.0.2.53', port: 53 },
        { host: '2001:db8::53', port: 5300 },
        { host: '127.0.0.1', port: 5353 },
      ]);
    } finally {
      dns.setServers(saved);
    }
  });
});
