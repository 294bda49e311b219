// The one IP parser and the range table against node:net (property-based, fast-check, fixed seed): the parser accepts
// exactly what isIP accepts (RFC 791 / RFC 4291 §2.2 text, RFC 4007 zones), prints RFC 5952 text as WHATWG URL does,
// and a table answers "in a range" exactly where BlockList does, naming the narrowest range (RFC 4632 blocks).
import { BlockList, isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatV4, formatV6, ipWords, isV4Mapped, parseCidr, parseIpInto } from '../../src/domain/ip-address.js';
import { buildRangeTable } from '../../src/domain/ip-range-table.js';

const opts = { seed: 20261129, numRuns: 3000 };
const words = ipWords();

const hex = (n: number, pad: number) => n.toString(16).padStart(pad, '0');
const v4Text = (n: number) => formatV4(n >>> 0);
const u32 = fc.integer({ min: 0, max: 0xffffffff });

/** 128-bit values biased to zero runs (so that '::' and its ties occur), as eight groups. */
const groups = fc.array(fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 });

/** Any spelling of an IPv6 address: upper/lower case, leading zeros, any zero run compressed, a dotted tail, a zone. */
const v6Spelling = fc
  .record({ g: groups, pad: fc.integer({ min: 1, max: 4 }), upper: fc.boolean(), cut: fc.nat(8), len: fc.nat(8), dotted: fc.boolean(), zone: fc.constantFrom('', '%eth0', '%1', '%a-b.c:d') })
  .map(({ g, pad, upper, cut, len, dotted, zone }) => {
    let parts = g.map((x) => hex(x, pad));
    if (dotted) parts = [...parts.slice(0, 6), v4Text(g[6] * 65536 + g[7])];
    const n = parts.length;
    const start = Math.min(cut, n);
    const end = Math.min(start + len, n);
    const text = end > start && g.slice(start, end + (dotted && end === n ? 1 : 0)).every((x) => x === 0) ? `${parts.slice(0, start).join(':')}::${parts.slice(end).join(':')}` : parts.join(':');
    return { text: (upper ? text.toUpperCase() : text) + zone, g };
  });

/** Near misses: strings over the characters addresses are made of. */
const nearMiss = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF:.%:.0:x '), maxLength: 45 });
/** A valid address with one character changed, inserted or removed. */
const edited = fc.tuple(fc.oneof(v6Spelling.map((s) => s.text), u32.map(v4Text)), fc.nat(), fc.constantFrom('', ':', '.', '0', 'f', 'g', '::', '%', '00', '1.2.3.4'), fc.nat(2)).map(
  ([s, at, piece, drop]) => {
    const i = at % (s.length + 1);
    return s.slice(0, i) + piece + s.slice(i + drop);
  },
);

describe('parseIpInto accepts what node:net isIP accepts', () => {
  it.each([
    ['valid IPv6 spellings', v6Spelling.map((s) => s.text)],
    ['IPv4 dotted quads', u32.map(v4Text)],
    ['near misses', nearMiss],
    ['edited addresses', edited],
  ])('%s', (_name, strings) => {
    fc.assert(fc.property(strings, (s) => {
      expect(parseIpInto(s, words)).toBe(isIP(s));
    }), opts);
  });

  it('reads the value that was written (IPv4)', () => {
    fc.assert(fc.property(u32, (n) => {
      expect([parseIpInto(v4Text(n), words), words[3]]).toEqual([4, n]);
    }), opts);
  });

  it('reads the value that was written (IPv6) and prints RFC 5952 text as WHATWG URL serialises it', () => {
    fc.assert(
      fc.property(v6Spelling, ({ text, g }) => {
        expect(parseIpInto(text, words)).toBe(6);
        expect([...words]).toEqual([0, 2, 4, 6].map((k) => (g[k] * 65536 + g[k + 1]) >>> 0));
        if (isV4Mapped(words)) return; // WHATWG writes ::ffff:102:304; the service answers the IPv4 address
        expect(formatV6(words)).toBe(new URL(`http://[${text.replace(/%.*$/, '')}]/`).hostname.slice(1, -1));
      }),
      opts,
    );
  });
});

interface Block {
  version: 4 | 6;
  base: bigint;
  bits: number;
}
const blockText = (b: Block) => `${b.version === 4 ? v4Text(Number(b.base)) : bigToV6(b.base)}/${b.bits}`;
const bigToV6 = (x: bigint) => Array.from({ length: 8 }, (_, k) => hex(Number((x >> BigInt(112 - 16 * k)) & 0xffffn), 1)).join(':');
const width = (v: 4 | 6) => (v === 4 ? 32 : 128);
const span = (b: Block) => 1n << BigInt(width(b.version) - b.bits);
const first = (b: Block) => (b.base / span(b)) * span(b);

/** Blocks in a small corner of each family, so that they nest and touch. */
const block = fc.oneof(
  fc.record({ version: fc.constant(4 as const), base: fc.bigInt({ min: 0x0a000000n, max: 0x0a00ffffn }), bits: fc.integer({ min: 12, max: 32 }) }),
  fc.record({ version: fc.constant(6 as const), base: fc.bigInt({ min: 0x20010db8n << 96n, max: (0x20010db8n << 96n) + (1n << 20n) }), bits: fc.integer({ min: 100, max: 128 }) }),
);

describe('buildRangeTable agrees with node:net BlockList', () => {
  it('an address is in the table exactly when BlockList holds it, under the narrowest block (earliest of equals)', () => {
    const probe = fc.tuple(fc.nat(), fc.constantFrom(-1n, 0n, 1n, 2n, 17n), fc.boolean());
    fc.assert(
      fc.property(fc.array(block, { minLength: 1, maxLength: 25 }), fc.array(probe, { minLength: 1, maxLength: 30 }), (blocks, probes) => {
        const list = new BlockList();
        for (const b of blocks) list.addSubnet(b.version === 4 ? v4Text(Number(first(b))) : bigToV6(first(b)), b.bits, b.version === 4 ? 'ipv4' : 'ipv6');
        const table = buildRangeTable(blocks.map((b, i) => ({ ...parseCidr(blockText(b))!, label: `L${i}` })));
        for (const [pick, offset, fromEnd] of probes) {
          const b = blocks[pick % blocks.length];
          const at = (fromEnd ? first(b) + span(b) - 1n : first(b)) + (fromEnd ? offset : -offset);
          if (at < 0n || at >= 1n << BigInt(width(b.version))) continue;
          const text = b.version === 4 ? v4Text(Number(at)) : bigToV6(at);
          const holders = blocks.map((x, i) => ({ x, i })).filter(({ x }) => x.version === b.version && first(x) <= at && at < first(x) + span(x));
          const narrowest = holders.sort((p, q) => q.x.bits - p.x.bits || p.i - q.i)[0];
          const found = table.lookup(text, b.version);
          expect(found >= 0).toBe(list.check(text, b.version === 4 ? 'ipv4' : 'ipv6'));
          expect(found < 0 ? null : table.labels[found]).toBe(narrowest ? `L${narrowest.i}` : null);
        }
      }),
      { seed: opts.seed, numRuns: 400 },
    );
  });
});
