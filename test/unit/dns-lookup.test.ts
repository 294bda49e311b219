// resolverLookup: the net.connect lookup contract (single address or all, family filter) over our DNS resolver.
import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { resolverLookup } from '../../src/adapters/dns/lookup.js';
import type { DnsAnswer, RecordType } from '../../src/adapters/dns/resolver.js';

const zone: Record<string, Partial<Record<RecordType, string[]>>> = {
  'both.test': { A: ['192.0.2.1', '192.0.2.2'], AAAA: ['2001:db8::1'] },
  'v6only.test': { AAAA: ['2001:db8::2'] },
};

const asked: string[] = [];
const resolver = {
  async query(name: string, type: RecordType): Promise<DnsAnswer> {
    asked.push(`${type} ${name}`);
    if (name === 'broken.test') throw new Error('SERVFAIL');
    const values = zone[name]?.[type] ?? [];
    return { rcode: zone[name] ? 'NOERROR' : 'NXDOMAIN', records: values.map((value) => ({ type, name, value, ttl: 60, priority: null })) };
  },
};

function lookup(host: string, options: object): Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }> {
  const fn: LookupFunction = resolverLookup(resolver);
  return new Promise((resolve) => fn(host, options as never, (err, address, family) => resolve({ err, address, family })));
}

describe('resolverLookup', () => {
  it.each([
    ['both.test', {}, '192.0.2.1', 4],
    ['both.test', { family: 6 }, '2001:db8::1', 6],
    ['v6only.test', {}, '2001:db8::2', 6],
    ['127.0.0.1', {}, '127.0.0.1', 4],
    ['::1', { family: 0 }, '::1', 6],
  ])('%s %j -> %s (IPv%i)', async (host, options, address, family) => {
    expect(await lookup(host, options)).toEqual({ err: null, address, family });
  });

  it('lists every address, A first, when asked for all', async () => {
    const r = await lookup('both.test', { all: true });
    expect(r.err).toBeNull();
    expect(r.address).toEqual([
      { address: '192.0.2.1', family: 4 },
      { address: '192.0.2.2', family: 4 },
      { address: '2001:db8::1', family: 6 },
    ]);
  });

  it('asks only for A records when IPv4 is wanted, and nothing for an IP literal', async () => {
    asked.length = 0;
    await lookup('both.test', { family: 4 });
    await lookup('192.0.2.9', {});
    expect(asked).toEqual(['A both.test']);
  });

  it.each([
    ['missing.test', {}, 'ENOTFOUND'],
    ['v6only.test', { family: 4 }, 'ENOTFOUND'],
    ['broken.test', {}, 'EAI_AGAIN'],
  ])('fails %s %j with %s', async (host, options, code) => {
    const r = await lookup(host, options);
    expect(r.err?.code).toBe(code);
  });
});
