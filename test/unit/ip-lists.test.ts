// Hosting and Tor flags: the range table (CIDR, RFC 4632; IPv6 text, RFC 4291) and the shipped snapshots.
import { beforeAll, describe, expect, it } from 'vitest';
import { createIpSecurity, hostingRangesFromText, loadHostingRanges, loadTorExits, torExitsFromText, type LoadedRanges } from '../../src/adapters/ip-data/ip-lists.js';
import { formatV4, parseCidr } from '../../src/domain/ip-address.js';
import { buildRangeTable } from '../../src/domain/ip-range-table.js';
import { classifyIp } from '../../src/domain/ip-ranges.js';
import { projectPath } from '../../src/http/spec.js';

const ip = (a: string) => classifyIp(a)!;

describe('parseCidr', () => {
  it.each([
    ['10.0.0.0/8', 4, 0x0a000000, 0x0affffff],
    ['10.1.2.3/8', 4, 0x0a000000, 0x0affffff], // host bits ignored
    ['1.2.3.4', 4, 0x01020304, 0x01020304],
    ['0.0.0.0/0', 4, 0, 0xffffffff],
  ])('%s', (text, version, first, last) => {
    expect(parseCidr(text)).toEqual({ version, first, last });
  });

  it.each([
    ['2001:db8::/32', 0x20010db8n << 96n, (0x20010db8n << 96n) | ((1n << 96n) - 1n)],
    ['::1', 1n, 1n],
    ['::/0', 0n, (1n << 128n) - 1n],
    ['::ffff:1.2.3.4/128', 0xffff01020304n, 0xffff01020304n],
  ])('%s', (text, first, last) => {
    expect(parseCidr(text)).toEqual({ version: 6, first, last });
  });

  it.each(['10.0.0.0/33', '256.0.0.0/8', '1.2.3', '01.2.3.4', '2001:db8::/129', '2001:db8:::1', '1::2::3', 'x', '', '10.0.0.0/', '10.0.0.0/8/8'])(
    '%s is refused',
    (text) => expect(parseCidr(text)).toBeNull(),
  );
});

describe('buildRangeTable', () => {
  const table = buildRangeTable(
    [
      ['10.0.0.0/8', 'Wide'],
      ['10.1.0.0/16', 'Narrow'], // inside Wide: wins where it is
      ['10.1.2.0/24', 'Wide'], // inside Narrow again
      ['192.168.0.0/24', 'A'],
      ['192.168.1.0/24', 'A'], // adjacent, same label: merged
      ['2001:db8::/32', 'Six'],
      ['2001:db8:1::/48', 'SixNarrow'],
      ['::1/128', 'Loop'],
    ].map(([cidr, label]) => ({ ...parseCidr(cidr)!, label })),
  );
  const name = (a: string) => {
    const i = table.lookup(ip(a).address, ip(a).version);
    return i < 0 ? null : table.labels[i];
  };

  it.each([
    ['10.0.0.0', 'Wide'],
    ['10.0.255.255', 'Wide'],
    ['10.1.0.0', 'Narrow'],
    ['10.1.1.255', 'Narrow'],
    ['10.1.2.7', 'Wide'],
    ['10.1.3.0', 'Narrow'],
    ['10.2.0.0', 'Wide'],
    ['10.255.255.255', 'Wide'],
    ['11.0.0.0', null],
    ['9.255.255.255', null],
    ['192.168.1.200', 'A'],
    ['192.168.2.0', null],
    ['2001:db8::1', 'Six'],
    ['2001:db8:1:ffff::', 'SixNarrow'],
    ['2001:db8:2::', 'Six'],
    ['2001:db9::', null],
    ['::1', 'Loop'],
    ['::2', null],
  ])('%s -> %s', (address, label) => {
    expect(name(address)).toBe(label);
  });

  it('keeps disjoint ranges: nested ones split the outer, adjacent ones of a label merge', () => {
    // 10/8 splits into Wide, Narrow, Wide, Narrow, Wide; the two 192.168 /24s are one range.
    expect(table.size).toEqual({ v4: 6, v6: 4 });
  });

  it('an empty table knows no address', () => {
    const empty = buildRangeTable([]);
    expect(empty.lookup('1.2.3.4', 4)).toBe(-1);
    expect(empty.lookup('2001:db8::1', 6)).toBe(-1);
  });
});

describe('list files', () => {
  it('hosting: `cidr,provider` lines with comments and a header', () => {
    const { table, entries } = hostingRangesFromText('# mine\ncidr,provider\n198.51.100.0/24,Example Cloud # a comment\n2001:db8::/32,"Example Cloud"\n');
    expect(entries).toBe(2);
    expect(table.labels).toEqual(['Example Cloud']);
  });

  it.each([
    ['a line without a provider', '198.51.100.0/24\n', /data line 1 is not "cidr,provider"/],
    ['a line that is no CIDR', 'cidr,provider\n198.51.100.0/24,A\nnot-an-address,B\n', /data line 3/],
    ['no line at all', '# nothing\n', /no range/],
  ])('hosting refuses %s', (_what, text, message) => {
    expect(() => hostingRangesFromText(text, 'hosting.csv')).toThrow(message);
  });

  it('Tor: bare addresses, CIDR blocks, or the exit-addresses format', () => {
    expect(torExitsFromText('192.0.2.1\n198.51.100.0/30\n').entries).toBe(2);
    const exitList = 'ExitNode 0011BD2485AD45D984EC4159C88FC066E5E3300E\nPublished 2026-08-22 01:02:03\nLastStatus 2026-08-22 02:00:00\nExitAddress 192.0.2.7 2026-08-22 02:10:11\n';
    const { table, entries } = torExitsFromText(exitList);
    expect(entries).toBe(1);
    expect(table.lookup('192.0.2.7', 4)).toBe(0);
  });

  it('Tor refuses a line that is no address', () => {
    expect(() => torExitsFromText('192.0.2.1\n<html>\n', 'tor.txt')).toThrow(/tor.txt: data line 2 is not an address/);
  });
});

describe('the shipped snapshots (data/ip)', () => {
  let hosting: LoadedRanges;
  let tor: LoadedRanges;
  beforeAll(async () => {
    hosting = await loadHostingRanges(projectPath('data/ip/hosting-ranges.csv'));
    tor = await loadTorExits(projectPath('data/ip/tor-exits.txt'));
  });

  it('hold every provider the contract names, and are dated by their own date line', () => {
    expect([...hosting.table.labels].sort()).toEqual(['Amazon Web Services', 'Cloudflare', 'DigitalOcean', 'Google Cloud', 'Microsoft Azure', 'Oracle Cloud']);
    expect(hosting.date).toBe('2025-07-24');
    expect(tor.date).toBe('2026-08-22');
  });

  it.each([
    ['3.5.140.1', 'Amazon Web Services'],
    ['2600:1f00:1000::1', 'Amazon Web Services'],
    ['34.35.1.1', 'Google Cloud'],
    ['4.144.0.1', 'Microsoft Azure'],
    ['40.233.0.1', 'Oracle Cloud'],
    ['104.16.0.1', 'Cloudflare'],
    ['2606:4700::6810:85e5', 'Cloudflare'],
    ['5.101.96.1', 'DigitalOcean'],
  ])('%s is in a range of %s', (address, provider) => {
    // The Tor Project's list is IPv4 only: for IPv6 the Tor flag is unknown.
    expect(createIpSecurity(hosting, tor).lookup(ip(address))).toEqual({ isHosting: true, hostingProvider: provider, isTor: address.includes(':') ? null : false });
  });

  it.each(['81.2.69.142', '1.128.0.1', '9.9.9.9', '2a02:8070::1'])('%s is in no provider range and no exit', (address) => {
    const flags = createIpSecurity(hosting, tor).lookup(ip(address));
    expect(flags.isHosting).toBe(false);
    expect(flags.hostingProvider).toBeNull();
    if (ip(address).version === 4) expect(flags.isTor).toBe(false);
  });

  it('a Tor exit from the snapshot is flagged', () => {
    expect(createIpSecurity(hosting, tor).lookup(ip('185.220.101.1'))).toMatchObject({ isTor: true });
    expect(createIpSecurity(hosting, tor).lookup(ip('2.56.10.36'))).toMatchObject({ isTor: true, isHosting: false });
  });

  it('the Tor list holds no IPv6 address: an IPv6 address is "unknown", not "no"', () => {
    expect(tor.table.size.v6).toBe(0);
    expect(createIpSecurity(hosting, tor).lookup(ip('2a02:8070::1')).isTor).toBeNull();
  });

  it('a list not loaded answers null for its flags', () => {
    expect(createIpSecurity(null, null).lookup(ip('3.5.140.1'))).toEqual({ isHosting: null, hostingProvider: null, isTor: null });
    expect(createIpSecurity(null, tor).lookup(ip('185.220.101.1'))).toEqual({ isHosting: null, hostingProvider: null, isTor: true });
  });

  it('answers shared objects: nothing is made per lookup', () => {
    const security = createIpSecurity(hosting, tor);
    expect(security.lookup(ip('3.5.140.1'))).toBe(security.lookup(ip('3.5.140.2')));
    expect(Object.isFrozen(security.lookup(ip('3.5.140.1')))).toBe(true);
  });
});

describe('labels in 32-bit indexes', () => {
  it('a hosting file of 70,000 providers names provider #66,000 (and the last) right', () => {
    // One /24 per provider from 10.0.0.0 on: provider n holds the n-th /24.
    const net = (n: number, host: number) => formatV4(0x0a000000 + n * 256 + host);
    const lines = Array.from({ length: 70_000 }, (_, n) => `${net(n, 0)}/24,P${n}`);
    const { table } = hostingRangesFromText(lines.join('\n'));
    expect(table.labels).toHaveLength(70_000);
    const name = (a: string) => table.labels[table.lookup(a, 4)];
    expect(name(net(66_000, 7))).toBe('P66000');
    expect(name(net(69_999, 255))).toBe('P69999');
    expect(name('10.0.0.1')).toBe('P0');
  });
});
