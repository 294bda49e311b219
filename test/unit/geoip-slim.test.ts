// The slim City database (src/adapters/geoip/slim-city.ts) answers every address as the full one, through our MaxMind DB
// writer (mmdb-writer.ts), whose files maxmind's own Reader must decode: MaxMind's test databases, every network.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader } from 'maxmind';
import { afterAll, describe, expect, it } from 'vitest';
import { openGeoIp } from '../../src/adapters/geoip/geoip-reader.js';
import { DataSection, Uint, type MmdbValue } from '../../src/adapters/geoip/mmdb-data.js';
import { assemble, writeNode } from '../../src/adapters/geoip/mmdb-tree.js';
import { slimCityDatabase } from '../../src/adapters/geoip/slim-city.js';
import { GEOIP_TEST_DIR } from '../fixtures/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'geoip-slim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Addresses inside every network of a JSON source: its first, its second and one far into it (IPv4 forms too). */
function addressesOf(jsonFile: string): string[] {
  const nets = (JSON.parse(readFileSync(join(GEOIP_TEST_DIR, jsonFile), 'utf8')) as object[]).map((e) => Object.keys(e)[0]);
  return nets.flatMap((cidr) => {
    const net = cidr.split('/')[0];
    const v4 = /^(::)?(\d+\.\d+\.\d+)\.(\d+)$/.exec(net);
    if (v4) return [0, 1, 7].map((d) => `${v4[2]}.${Math.min(255, Number(v4[3]) + d)}`).flatMap((a) => [a, `::ffff:${a}`]);
    return [net.endsWith('::') ? `${net}1` : net, net.replace(/::.*$/, '::ffff')];
  });
}

describe.each(['GeoIP2-City-Test', 'GeoLite2-City-Test'])('the slim form of %s', (name) => {
  const original = join(GEOIP_TEST_DIR, `${name}.mmdb`);
  const slim = join(dir, `${name}.slim.mmdb`);
  writeFileSync(slim, slimCityDatabase(readFileSync(original)));

  it('answers every network of the source as the original does', async () => {
    const [full, cut] = await Promise.all([openGeoIp({ cityDb: original }), openGeoIp({ cityDb: slim })]);
    const addresses = [...addressesOf(`${name}.json`), '8.8.8.8', '::1', '2001:db8::1'];
    const found = addresses.filter((ip) => full.lookup(ip) !== null);
    expect(found.length).toBeGreaterThan(40);
    for (const ip of addresses) expect([ip, cut.lookup(ip)]).toEqual([ip, full.lookup(ip)]);
    expect(cut.databases.map((d) => [d.databaseType, d.buildDate])).toEqual(full.databases.map((d) => [d.databaseType, d.buildDate]));
  });

  it('is smaller and carries English names only', () => {
    expect(readFileSync(slim).length).toBeLessThan(readFileSync(original).length);
    expect(new Reader(readFileSync(slim)).metadata.languages).toEqual(['en']);
  });
});

describe('the MaxMind DB writer', () => {
  // One node (IPv4): 0.0.0.0/1 -> A, 128.0.0.0/1 -> B. B repeats strings A wrote at offsets needing each pointer size.
  const a = { s0: 'first', p1: 'x'.repeat(3000), s1: 'second', p2: 'y'.repeat(600_000), s2: 'third' };
  const b: Record<string, MmdbValue> = { s0: 'first', s1: 'second', s2: 'third', yes: true, no: false, n: -12.25, list: ['a', { k: 'v' }], long: 'z'.repeat(70_000) };

  it("writes maps, arrays, strings of every length form, doubles, booleans and pointers maxmind's Reader reads back", () => {
    const data = new DataSection();
    const [at, bt] = [data.write(a), data.write(b)];
    const tree = Buffer.alloc(6);
    writeNode(tree, 0, 24, 1 + 16 + at, 1 + 16 + bt);
    const meta = { node_count: new Uint(1, 4), record_size: new Uint(24, 2), ip_version: new Uint(4, 2), database_type: 'Test', languages: ['en'] };
    const file = assemble(tree, data.bytes(), { ...meta, binary_format_major_version: new Uint(2, 2), binary_format_minor_version: new Uint(0, 2), build_epoch: new Uint(1_700_000_000, 8) });
    const reader = new Reader(file);
    expect(reader.get('1.2.3.4')).toEqual(a);
    expect(reader.get('200.1.2.3')).toEqual(b);
    expect(reader.metadata.buildEpoch.toISOString()).toBe('2023-11-14T22:13:20.000Z');
  });

  it.each([24, 28, 32] as const)('writes %i-bit records', (size) => {
    const node = Buffer.alloc(size / 4);
    const [left, right] = [2 ** size - 3, 2 ** (size - 1) + 5];
    writeNode(node, 0, size, left, right);
    const bits = [...node].map((x) => x.toString(2).padStart(8, '0')).join('');
    const mid = size === 28 ? bits.slice(24, 28) + bits.slice(0, 24) : bits.slice(0, size);
    expect(parseInt(mid, 2)).toBe(left);
    const rightBits = size === 28 ? bits.slice(28, 32) + bits.slice(32) : bits.slice(size);
    expect(parseInt(rightBits, 2)).toBe(right);
  });
});
