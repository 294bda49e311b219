// SSRF: the TLS inspector refuses every non-public target in every spelling (property-based), and names resolving
// to them; the range client calls only PWNED_PASSWORDS_URL, following no redirect.
// (Single cases already covered: test/unit/tls-prober.test.ts, test/contract/tls-ip.test.ts, test/unit/range-client.test.ts.)
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTlsProber } from '../../src/adapters/tls/prober.js';
import { RefusedTarget } from '../../src/errors.js';
import { asApiError } from '../../src/error-answers.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startFaultyRange, type FaultyRange } from '../faults/fault-upstreams.js';
import { startUpstreams, type Upstreams } from '../faults/fixtures.js';

const SEED = 0x55f;

/** Non-public IPv4 blocks (RFC 6890 special-purpose, multicast, reserved), written here independently of src/. */
const V4_BLOCKS: Array<[string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const v4ToInt = (a: string) => a.split('.').reduce((n, p) => n * 256 + Number(p), 0);
const intToV4 = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
const hex16 = (n: number) => n.toString(16);

/** A non-public IPv4 address as an unsigned 32-bit number. */
const privateV4 = fc
  .constantFrom(...V4_BLOCKS)
  .chain(([base, bits]) => fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((host) => (v4ToInt(base) + host) >>> 0));

/** Every spelling an OS resolver (inet_aton) or an IPv6 parser reads as that address, or as a v6 address embedding it. */
const spellings = (n: number): string[] => {
  const [a, b, c, d] = [24, 16, 8, 0].map((s) => (n >>> s) & 255);
  const part = (x: number, style: number) => (style === 0 ? String(x) : style === 1 ? `0x${x.toString(16)}` : `0${x.toString(8)}`);
  return [
    intToV4(n),
    `${intToV4(n)}.`,
    String(n),
    `0x${n.toString(16)}`,
    `0X${n.toString(16).toUpperCase()}`,
    `0${n.toString(8)}`,
    `${a}.${(n & 0xffffff) >>> 0}`,
    `${a}.${b}.${n & 0xffff}`,
    [a, b, c, d].map((x, i) => part(x, (n + i) % 3)).join('.'),
    `[::ffff:${intToV4(n)}]`,
    `::ffff:${hex16(n >>> 16)}:${hex16(n & 0xffff)}`,
    `[0:0:0:0:0:ffff:${intToV4(n)}]`,
    `[64:ff9b::${intToV4(n)}]`,
    `[2002:${hex16(n >>> 16)}:${hex16(n & 0xffff)}::1]`,
    `[::${intToV4(n)}]`,
  ];
};

/** Non-public IPv6 prefixes with random low bits. */
const privateV6Address = fc.oneof(
  fc.constant('::1'),
  fc.constant('::'),
  fc.tuple(fc.integer({ min: 0xfe80, max: 0xfebf }), fc.integer({ min: 0, max: 0xffff })).map(([p, x]) => `${hex16(p)}::${hex16(x)}`),
  fc.tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), fc.integer({ min: 0, max: 0xffff })).map(([p, x]) => `${hex16(p)}:${hex16(x)}::1`),
  fc.tuple(fc.integer({ min: 0xff00, max: 0xffff }), fc.integer({ min: 0, max: 0xffff })).map(([p, x]) => `${hex16(p)}::${hex16(x)}`),
  fc.integer({ min: 0, max: 0xffff }).map((x) => `2001:db8:${hex16(x)}::1`),
  fc.integer({ min: 0, max: 0xffff }).map((x) => `100::${hex16(x)}`),
);
/** ...written plain, in brackets, or upper-case. */
const privateV6 = fc
  .tuple(privateV6Address, fc.constantFrom('plain', 'bracketed', 'upper'))
  .map(([a, style]) => (style === 'plain' ? a : style === 'bracketed' ? `[${a}]` : a.toUpperCase()));

function strictProber(resolve: (name: string) => Promise<string[]>) {
  return createTlsProber({ resolve, port: 9, timeoutMs: 300, allowPrivate: false, hstsTimeoutMs: 0 });
}

describe('TLS inspector: every spelling of a non-public address is refused before any connection (property)', () => {
  let lookups = 0;
  const prober = strictProber(async () => {
    lookups++;
    return ['192.0.2.1'];
  });

  it('IPv4 in dotted, numeric, hex, octal, short and mixed forms, and embedded in IPv6', async () => {
    await fc.assert(
      fc.asyncProperty(privateV4, async (n) => {
        for (const target of spellings(n)) {
          const err = await prober.inspect(target).then(
            () => null,
            (e: unknown) => e,
          );
          expect(err, target).toBeInstanceOf(RefusedTarget);
          expect(asApiError(err), target).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
        }
      }),
      { seed: SEED, numRuns: 200 },
    );
    expect(lookups).toBe(0);
  });

  it('IPv6 loopback, unspecified, link-local, unique-local, multicast, documentation, discard', async () => {
    await fc.assert(
      fc.asyncProperty(privateV6, async (target) => {
        const err = await prober.inspect(target).catch((e: unknown) => e);
        expect(err, target).toBeInstanceOf(RefusedTarget);
        expect(asApiError(err), target).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
      }),
      { seed: SEED, numRuns: 150 },
    );
    expect(lookups).toBe(0);
  });

  it.each(['[fe80::1%25eth0]', '[fe80::1%eth0]', 'localhost', 'localhost.', '１２７.0.0.1', '127。0。0。1'])('%s is refused as malformed (400)', async (target) => {
    const err = await prober.inspect(target).catch((e: unknown) => e);
    expect(asApiError(err)).toMatchObject({ status: 400, code: 'INVALID_FORMAT' });
  });
});

describe('end to end, strict server (ALLOW_PRIVATE_TARGETS unset)', () => {
  const samples = ['10.20.30.40', '172.31.255.254', '192.168.0.1', '169.254.169.254', '100.64.1.1', '127.0.0.53', '0.0.0.0', '198.18.0.1', '224.0.0.251'];
  const v6 = ['::1', 'fe80::1', 'fd00:ec2::254', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe', '2002:c0a8:101::1'];
  let up: Upstreams;
  let h: Harness;
  let elsewhere: FaultyRange;

  beforeAll(async () => {
    const zone = {
      ...Object.fromEntries(samples.map((ip, i) => [`v4-${i}.ssrf.test`, [{ type: 'A' as const, data: ip }]])),
      ...Object.fromEntries(v6.map((ip, i) => [`v6-${i}.ssrf.test`, [{ type: 'AAAA' as const, data: ip }]])),
      'alias.ssrf.test': [{ type: 'CNAME' as const, data: 'v4-0.ssrf.test' }],
      'both.ssrf.test': [
        { type: 'A' as const, data: '127.0.0.1' },
        { type: 'AAAA' as const, data: '2606:4700::1111' },
      ],
    };
    up = await startUpstreams({ zone });
    elsewhere = await startFaultyRange();
    const { ALLOW_PRIVATE_TARGETS: _allowed, ...strict } = up.env;
    h = await startHarness(strict);
  });
  afterAll(async () => {
    await h.close();
    await up.close();
    await elsewhere.close();
  });

  it.each([
    ...samples.map((ip, i) => [`v4-${i}.ssrf.test`, ip]),
    ...v6.map((ip, i) => [`v6-${i}.ssrf.test`, ip]),
    ['alias.ssrf.test', `CNAME to ${samples[0]}`],
    ['both.ssrf.test', '127.0.0.1 and a public IPv6 address'],
  ])('refuses %s (resolves to %s) with 400 VALIDATION_ERROR, connecting nowhere', async (name) => {
    const before = up.tls.connections();
    const res = await h.call(`/api/v1/ssl/${name}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(up.tls.connections()).toBe(before);
  });

  it('refuses literal spellings sent through HTTP (property)', async () => {
    await fc.assert(
      fc.asyncProperty(privateV4, fc.nat(14), async (n, pick) => {
        const target = spellings(n)[pick];
        const res = await h.call(`/api/v1/ssl/${encodeURIComponent(target)}`);
        expect(res.status, target).toBe(400);
      }),
      { seed: SEED, numRuns: 40 },
    );
    expect(up.tls.connections()).toBe(0);
  });

  it.each([301, 302, 303, 307, 308] as const)('follows no %i redirect from the range service to another host: 502', async (status) => {
    up.range.mode = 'redirect';
    up.range.redirectStatus = status;
    up.range.redirectTo = elsewhere.baseUrl;
    try {
      const res = await h.call('/api/v1/password/strength', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ password: `redirected-${status}-pw` }),
      });
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(elsewhere.requests).toEqual([]);
    } finally {
      up.range.mode = 'ok';
    }
  });
});
