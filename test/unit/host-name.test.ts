// One name grammar for /dns and /ssl (openapi.yaml DnsName, TlsHost): the same names are read the same way, and the
// two differ only where the contract says (single labels and '_' for DNS; IP addresses in standard form for TLS).
import { beforeAll, describe, expect, it } from 'vitest';
import { DNS_NAME, HOST_NAME, parseName } from '../../src/domain/host-name.js';
import { requestedTlsTarget } from '../../src/domain/tls-target.js';
import { loadSpec } from '../../src/http/spec.js';

const dns = (s: string) => {
  const r = parseName(s, DNS_NAME);
  return r.ok ? r.name : null;
};
const tls = (s: string) => {
  const t = requestedTlsTarget(s);
  return t.kind === 'invalid' ? null : t.kind === 'hostname' ? t.name : `${t.kind}:${t.address}`;
};

describe('names both operations take alike', () => {
  it.each([
    ['Example.COM.', 'example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['xn--bcher-kva.test', 'xn--bcher-kva.test'],
    ['ab--cd.test', 'ab--cd.test'],
    ['a.1e', 'a.1e'],
    ['0x.test', '0x.test'],
    [`${'a'.repeat(63)}.test`, `${'a'.repeat(63)}.test`],
  ])('%s is %s for both', (input, name) => {
    expect(dns(input)).toBe(name);
    expect(tls(input)).toBe(name);
  });

  it.each([
    '000',
    '0x7f.1',
    '127.1',
    '2130706433',
    'example.123',
    'example.0x1f',
    'a.0x',
    'a..b',
    '-a.test',
    'a-.test',
    'exa mple.com',
    '',
    '\r',
    ' ',
    `${'a'.repeat(64)}.test`,
    `${'a.'.repeat(127)}com`,
    'aשלום.test',
    'xn--zz.test',
    'XN--A.test',
    '１２７.0.0.1',
  ])('%j is refused by both', (input) => {
    expect(dns(input)).toBeNull();
    expect(tls(input)).toBeNull();
  });
});

describe('where the contract lets them differ', () => {
  it.each([
    ['localhost', 'localhost'],
    ['com', 'com'],
    ['_dmarc.example.com', '_dmarc.example.com'],
  ])('DNS takes %s (a single label or an underscore); TLS does not', (input, name) => {
    expect(dns(input)).toBe(name);
    expect(tls(input)).toBeNull();
  });

  it.each([
    ['192.0.2.1', 'ip:192.0.2.1'],
    ['2001:db8::1', 'ip:2001:db8::1'],
    ['::ffff:10.0.0.1', 'ip:10.0.0.1'],
  ])('TLS takes the IP address %s in standard form; DNS does not', (input, target) => {
    expect(tls(input)).toBe(target);
    expect(dns(input)).toBeNull();
  });

  it.each(['[::1]', '[::ffff:127.0.0.1]', 'fe80::1%eth0', '01.2.3.4', '1.2.3.4.'])('TLS refuses %s: no IP address in standard form', (input) => {
    expect(tls(input)).toBeNull();
  });
});

describe('reasons', () => {
  it('say why without repeating the value', () => {
    const r = parseName('4111111111111111_.test', HOST_NAME);
    expect(r).toEqual({ ok: false, reason: 'each label must be 1-63 letters, digits or inner hyphens' });
  });
});

// The contract's patterns (openapi.yaml DnsName, TlsHost) and the service agree on where a combining mark may stand:
// UTS #46 refuses a label that starts with one (RFC 5891 §4.2.3.2), so the pattern says so (issue #43, item 5).
describe('combining marks: the contract says what the service does', () => {
  let schemas: { dns: RegExp[]; tls: RegExp[] };
  beforeAll(async () => {
    const params = ((await loadSpec()).document as any).components.parameters;
    // The name alternatives (TlsHost's address alternatives are formats, not patterns: no name passes them).
    const patterns = (p: any): RegExp[] => p.schema.anyOf.filter((s: any) => s.pattern).map((s: any) => new RegExp(s.pattern, 'u'));
    schemas = { dns: patterns(params.DnsName), tls: patterns(params.TlsHost) };
  });
  const accepted = (patterns: RegExp[], s: string) => patterns.some((p) => p.test(s));

  it.each([
    ['a.\u0305.example', false],
    ['\u0301a.example', false],
    ['x.\u0301', false],
    ['a.\u0903x.example', false],
    ['e\u0301.example', true],
    ['ab\u0301.example', true],
    ['a-\u0301b.example', true],
    ['1\u0301.example', true],
    ['b\u00fccher.example', true],
  ])('%j: taken by both the schema and the service: %s', (input, ok) => {
    expect(accepted(schemas.dns, input)).toBe(ok);
    expect(dns(input) !== null).toBe(ok);
    expect(accepted(schemas.tls, input)).toBe(ok);
    expect(tls(input) !== null).toBe(ok);
  });
});
