// IP classification against the IANA special-purpose registries (RFC 6890), canonical text (RFC 5952), inet_aton forms.
import { describe, expect, it } from 'vitest';
import { parseLegacyIpv4 } from '../../src/domain/ip-address.js';
import { canonicalIpv6, classifyIp, isStandardIp, parseIp } from '../../src/domain/ip-ranges.js';
import { parseTlsTarget } from '../../src/domain/tls-target.js';

describe('classifyIp: non-public IPv4 ranges', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this-network'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'ietf-protocol-assignments'],
    ['192.0.0.11', 'ietf-protocol-assignments'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', '6to4-relay-anycast'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ])('%s is %s', (ip, range) => {
    expect(classifyIp(ip)).toEqual({ version: 4, address: ip, public: false, range });
  });
});

describe('classifyIp: public IPv4 at the edges of the ranges', () => {
  it.each(['9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '169.253.255.255', '192.167.255.255', '198.17.255.255', '198.20.0.0', '223.255.255.255', '8.8.8.8', '81.2.69.142', '192.0.0.9', '192.0.0.10'])(
    '%s is public',
    (ip) => {
      expect(classifyIp(ip)).toEqual({ version: 4, address: ip, public: true });
    },
  );
});

describe('classifyIp: non-public IPv6 ranges', () => {
  it.each([
    ['::', '::', 'unspecified'],
    ['::1', '::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', '::1', 'loopback'],
    ['fe80::1', 'fe80::1', 'link-local'],
    ['fe80::1%eth0', 'fe80::1', 'link-local'],
    ['febf:ffff::1', 'febf:ffff::1', 'link-local'],
    ['fec0::1', 'fec0::1', 'site-local'],
    ['fc00::1', 'fc00::1', 'unique-local'],
    ['fdff:ffff::1', 'fdff:ffff::1', 'unique-local'],
    ['ff02::1', 'ff02::1', 'multicast'],
    ['2001:db8::1', '2001:db8::1', 'documentation'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1', 'documentation'],
    ['3fff::1', '3fff::1', 'documentation'],
    ['100::1', '100::1', 'discard-only'],
    ['2001::1', '2001::1', 'teredo'],
    ['2001:2::1', '2001:2::1', 'ietf-protocol-assignments'],
    ['2001:1::4', '2001:1::4', 'ietf-protocol-assignments'],
    ['2001:4:113::1', '2001:4:113::1', 'ietf-protocol-assignments'],
    ['2001:40::1', '2001:40::1', 'ietf-protocol-assignments'],
    ['64:ff9b:1::1', '64:ff9b:1::1', 'nat64-local-use'],
    ['64:ff9b::7f00:1', '64:ff9b::7f00:1', 'nat64 (loopback)'],
    ['64:ff9b::10.0.0.1', '64:ff9b::a00:1', 'nat64 (private)'],
    ['2002:c0a8:101::1', '2002:c0a8:101::1', '6to4 (private)'],
    ['2002:7f00:1::', '2002:7f00:1::', '6to4 (loopback)'],
    ['::1.2.3.4', '::102:304', 'reserved'],
    ['4000::1', '4000::1', 'reserved'],
    ['5f00::1', '5f00::1', 'srv6-sid'],
  ])('%s is %s', (ip, address, range) => {
    expect(classifyIp(ip)).toEqual({ version: 6, address, public: false, range });
  });
});

describe('classifyIp: public IPv6', () => {
  it.each([
    ['2a02:cf40::1', '2a02:cf40::1'],
    ['2001:480:10::1', '2001:480:10::1'],
    ['2001:4860:4860::8888', '2001:4860:4860::8888'],
    ['64:ff9b::8.8.8.8', '64:ff9b::808:808'],
    ['2002:808:808::1', '2002:808:808::1'],
    ['2001:0db9::1', '2001:db9::1'],
    ['2001:1::1', '2001:1::1'],
    ['2001:1::2', '2001:1::2'],
    ['2001:1::3', '2001:1::3'],
    ['2001:3::5', '2001:3::5'],
    ['2001:4:112::1', '2001:4:112::1'],
    ['2001:20::1', '2001:20::1'],
    ['2001:3f::1', '2001:3f::1'],
  ])('%s is public as %s', (ip, address) => {
    expect(classifyIp(ip)).toEqual({ version: 6, address, public: true });
  });
});

describe('classifyIp: IPv4-mapped IPv6 is the IPv4 address', () => {
  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1', false],
    ['::ffff:7f00:1', '127.0.0.1', false],
    ['0:0:0:0:0:ffff:10.1.2.3', '10.1.2.3', false],
    ['::FFFF:192.168.0.1', '192.168.0.1', false],
    ['::ffff:169.254.169.254', '169.254.169.254', false],
    ['::ffff:81.2.69.142', '81.2.69.142', true],
  ])('%s → %s', (ip, address, isPublic) => {
    const c = classifyIp(ip);
    expect(c?.version).toBe(4);
    expect(c?.address).toBe(address);
    expect(c?.public).toBe(isPublic);
  });
});

describe('classifyIp and parseIp: not an address', () => {
  it.each(['', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '0x7f.0.0.1', '2130706433', '[::1]', '::1::2', '12345::', 'gggg::1', ' 1.2.3.4'])(
    '%j is not an IP',
    (s) => {
      expect(classifyIp(s)).toBeNull();
      expect(parseIp(s)).toBeNull();
    },
  );

  it('parseIp canonicalises IPv6 per RFC 5952', () => {
    expect(parseIp('2001:DB8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
  });

  it('parseIp compresses only the longest zero run', () => {
    expect(parseIp('1:0:0:1:0:0:0:1')).toBe('1:0:0:1::1');
  });

  it.each([
    ['2001::1:0:0:0:1', '2001:0:0:1::1'],
    ['2001:DB8:0:0:1:0:0:0', '2001:db8:0:0:1::'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['::ffff:c000:201', '::ffff:192.0.2.1'],
    ['192.0.2.1', null],
  ])('canonicalIpv6(%j) is %j (RFC 5952 sections 4 and 5)', (given, want) => {
    expect(canonicalIpv6(given)).toBe(want);
  });

  it('isStandardIp rejects legacy numeric forms', () => {
    expect(isStandardIp('127.0.0.1')).toBe(true);
    expect(isStandardIp('0177.0.0.1')).toBe(false);
  });
});

describe('parseLegacyIpv4 (inet_aton forms used to smuggle addresses)', () => {
  it.each([
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0X7F.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['017700000001', '127.0.0.1'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'],
    ['10.0x10000', '10.1.0.0'],
    ['192.168.257', '192.168.1.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['8.8.8.8', '8.8.8.8'],
  ])('%s means %s', (s, ip) => {
    expect(parseLegacyIpv4(s)).toBe(ip);
  });

  it.each(['4294967296', '1.2.3.256', '256.1', '08.1.1.1', '1.2.3.4.5', '1..2', '', 'example.com', '0x1g', '1.2.3.-4', '1.2.16777216'])(
    '%j is not one',
    (s) => {
      expect(parseLegacyIpv4(s)).toBeNull();
    },
  );
});

describe('parseTlsTarget', () => {
  it.each([
    ['Example.COM.', { kind: 'hostname', name: 'example.com' }],
    ['bücher.example', { kind: 'hostname', name: 'xn--bcher-kva.example' }],
    ['127.0.0.1', { kind: 'ip', name: '127.0.0.1', address: '127.0.0.1' }],
    ['[::1]', { kind: 'ip', name: '::1', address: '::1' }],
    ['::ffff:10.0.0.1', { kind: 'ip', name: '::ffff:10.0.0.1', address: '10.0.0.1' }],
    ['0x7f.1', { kind: 'numeric-ipv4', name: '0x7f.1', address: '127.0.0.1' }],
    ['2130706433', { kind: 'numeric-ipv4', name: '2130706433', address: '127.0.0.1' }],
  ])('%s → %j', (s, expected) => {
    expect(parseTlsTarget(s)).toEqual(expected);
  });

  it.each(['', 'localhost', 'exa mple.com', '-bad.example', 'bad-.example', 'a..b', 'example.123', `${'a'.repeat(64)}.example`, `${'a.'.repeat(130)}com`, 'http://example.com', '[example.com]', 'fe80::1%eth0'])(
    '%j is invalid',
    (s) => {
      expect(parseTlsTarget(s).kind).toBe('invalid');
    },
  );
});
