// Host names and email domains against UTS #46 as the WHATWG URL Standard runs it (tr46, called directly here): a corpus
// of valid and invalid IDNs, each read by the DNS and TLS name grammar and by the email parser, must get the verdict the
// reference and the contract's rules give; and no verdict may come from the runtime's own IDNA (issue #49, item 1).
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEmailAddress } from '../../src/domain/email.js';
import { DNS_NAME, HOST_NAME, parseName, type NameRules } from '../../src/domain/host-name.js';
import { domainToAscii } from '../../src/domain/idna.js';

const tr46 = createRequire(import.meta.url)('tr46') as { toASCII(d: string, o: object): string | null };
/** The WHATWG URL host parser's call of UTS #46 (URL Standard, "domain to ASCII" with beStrict false). */
const WHATWG = { checkHyphens: false, checkBidi: true, checkJoiners: true, useSTD3ASCIIRules: false, transitionalProcessing: false, verifyDNSLength: false, ignoreInvalidPunycode: false };
const reference = (s: string) => tr46.toASCII(s, WHATWG);

const label = (n: number, c = 'a') => c.repeat(n);
/** An ASCII name of exactly `total` characters, in labels of at most 63. */
const asciiName = (total: number) => {
  const labels: string[] = [];
  let left = total;
  while (left > 0) {
    const n = Math.min(63, left === 65 ? 62 : left);
    labels.push(label(n, 'x'));
    left -= n + 1;
  }
  return labels.join('.').slice(0, total);
};

/** Known answers, from the standards and their test data: [input, A-labels or null when refused]. */
const KNOWN: [string, string | null][] = [
  // A-labels that are no Punycode of a valid U-label: Node 20 refuses them, Node 24's domainToASCII keeps them.
  ['xn--zz.com', null],
  ['xn--a.com', null],
  ['xn--ample.com', null],
  ['xn--.com', null],
  ['xn--abc-.com', null], // decodes to ASCII "abc"
  ['xn--ab--cd.test', null],
  ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
  ['XN--BCHER-KVA.EXAMPLE', 'xn--bcher-kva.example'],
  ['xn--wgv71a119e.JP', 'xn--wgv71a119e.jp'],
  // Mapping: case, width, ignored code points, deviations kept (nontransitional).
  ['Bücher.Example', 'xn--bcher-kva.example'],
  ['ＥＸＡＭＰＬＥ．ＣＯＭ', 'example.com'],
  ['例え。テスト', 'xn--r8jz45g.xn--zckzah'],
  ['ex\u00adample.com', 'example.com'],
  ['faß.de', 'xn--fa-hia.de'],
  ['ς.gr', 'xn--3xa.gr'],
  ['日本語.jp', 'xn--wgv71a119e.jp'],
  // Emoji and symbols (valid in UTS #46, not in IDNA2008).
  ['💩.la', 'xn--ls8h.la'],
  ['i❤.ws', 'xn--i-7iq.ws'],
  // Mixed scripts: UTS #46 has no script rule (the homograph is a UTS #39 concern).
  ['pаypal.com', 'xn--pypal-4ve.com'],
  // Joiners (CheckJoiners, RFC 5892 appendix A): only after a virama, or ZWNJ between joining Arabic letters.
  ['a\u200db.example', null],
  ['a\u200cb.example', null],
  ['क्\u200dष.example', 'xn--11b2ezcw70k.example'],
  ['क्\u200cष.example', 'xn--11b2ezcs70k.example'],
  ['\u0628\u200c\u0628.example', 'xn--ngba799q.example'],
  // Bidi (CheckBidi, RFC 5893): no mixing directions in a label, nor a digit-led label in a bidi name.
  ['שלום.com', 'xn--9dbne9b.com'],
  ['שלום1.test', 'xn--1-9hcuf1d.test'],
  ['aשלום.test', null],
  ['1שלום.test', null],
  ['123.שלום', null],
  ['\u0661\u0662\u0031.example', null],
  // Disallowed code points, a leading combining mark.
  ['a\u2488.com', null],
  ['\ue000.com', null],
  ['a\ufffdb.com', null],
  ['\u0301a.example', null],
];

/** The corpus: the known answers, each also upper-cased and with a trailing dot, then lengths around 63, 253 and 254. */
const CORPUS: string[] = [
  ...new Set([
    ...KNOWN.flatMap(([s]) => [s, s.toUpperCase(), `${s}.`, `${s}..`]),
    // Over-long labels, ASCII and IDN (A-label 63 or 64 characters).
    `${label(63)}.com`,
    `${label(64)}.com`,
    `${label(55, 'ü')}.de`,
    `${label(56, 'ü')}.de`,
    `${label(60, 'ü')}.de`,
    `xn--${label(60)}.com`,
    // Whole names of 252, 253 and 254 characters, with and without a trailing dot; an IDN name at 253/254 in A-labels.
    ...[249, 250, 252, 253, 254].flatMap((n) => [asciiName(n), `${asciiName(n)}.`]),
    `bücher.${asciiName(253 - 'xn--bcher-kva.'.length)}`,
    `bücher.${asciiName(254 - 'xn--bcher-kva.'.length)}`,
    // Hyphens, underscores, numbers, single labels, separators and spaces.
    'ab--cd.test',
    '-a.test',
    'a-.test',
    '_dmarc.example.com',
    'example.123',
    'example.0x1f',
    'localhost',
    'com',
    'a..b',
    '.',
    ' example.com ',
    '\u00a0a.com',
    'a\u3000b.com',
    'exa mple.com',
    'a%41.com',
    'bü:cher.example',
    'bü/cher.example',
    'ｅｘａｍｐｌｅ％.com',
  ]),
];

/** The contract's name grammar (openapi.yaml DnsName, TlsHost) on top of the reference, written out independently. */
function contractName(input: string, rules: NameRules): string | null {
  let s = input.trim();
  if (s.endsWith('.')) s = s.slice(0, -1);
  if (s === '' || (/[^\x00-\x7f]/.test(s) && /[\s%/\\@[\]?#:]/.test(s))) return null;
  const a = reference(s);
  if (a === null || a.length > 253) return null;
  const labels = a.split('.');
  if (labels.length < rules.minLabels) return null;
  const ldh = rules.underscore ? /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/ : /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
  if (!labels.every((l) => ldh.test(l))) return null;
  return /^(?:[0-9]+|0x[0-9a-f]*)$/.test(labels[labels.length - 1]) ? null : a;
}

/** openapi.yaml's email format rules for `user@DOMAIN` on top of the reference: the domain side only. */
function contractEmailValid(domain: string): boolean {
  if (INVISIBLE.test(domain) || /[\s%/\\@[\]?#]/.test(domain)) return false;
  const a = reference(domain);
  if (a === null || a.length > 253 || Buffer.byteLength(`user@${a}`) > 254) return false;
  const labels = a.split('.');
  return (
    labels.length >= 2 &&
    labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) &&
    /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(labels[labels.length - 1])
  );
}

/** openapi.yaml EmailValidationResult.validFormat: no invisible or control character anywhere in an address. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

const verdict = (r: ReturnType<typeof parseName>) => (r.ok ? r.name : null);

describe(`UTS #46 differential: ${CORPUS.length} names against tr46`, () => {
  it('src/domain/idna.ts answers as tr46 does for every name (its ASCII fast path included)', () => {
    const disagree = CORPUS.filter((s) => domainToAscii(s) !== reference(s));
    expect(disagree).toEqual([]);
  });

  it('the DNS name grammar (/api/v1/dns/{domain}) agrees with the reference and the contract on every name', () => {
    const disagree = CORPUS.filter((s) => verdict(parseName(s, DNS_NAME)) !== contractName(s, DNS_NAME));
    expect(disagree).toEqual([]);
  });

  it('the host name grammar (/api/v1/ssl/{domain}, MTA-STS, AIA) agrees on every name', () => {
    const disagree = CORPUS.filter((s) => verdict(parseName(s, HOST_NAME)) !== contractName(s, HOST_NAME));
    expect(disagree).toEqual([]);
  });

  it('the email parser agrees on every name as the domain of user@DOMAIN', () => {
    const disagree = CORPUS.filter((s) => s.trim() === s && parseEmailAddress(`user@${s}`).validFormat !== contractEmailValid(s));
    expect(disagree).toEqual([]);
  });

  it('both agree with each other: a name is refused or accepted alike by the reference and the service', () => {
    const accepted = CORPUS.filter((s) => contractName(s, DNS_NAME) !== null).length;
    // The corpus exercises both sides.
    expect(accepted).toBeGreaterThan(30);
    expect(CORPUS.length - accepted).toBeGreaterThan(30);
  });

  it('random names over letters, digits, xn--, joiners, bidi and mapped characters: the same A-labels as tr46', () => {
    const piece = fc.constantFrom('a', 'Z', '0', '9', '-', '_', '.', 'xn--', 'XN--', 'zz', 'bcher-kva', 'ü', 'ß', 'ς', '\u200d', '\u200c', '्', 'क', 'ש', '1', '\u0661', 'ｅ', '．', '\u00ad', '💩');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const s = parts.join('');
        expect(domainToAscii(s)).toBe(reference(s));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('known answers (UTS #46, RFC 5892, RFC 5893)', () => {
  it.each(KNOWN)('%j is %j for DNS, TLS and email alike', (input, ascii) => {
    expect(verdict(parseName(input, DNS_NAME))).toBe(ascii);
    expect(verdict(parseName(input, HOST_NAME))).toBe(ascii);
    // An address refuses invisible characters (joiners, soft hyphens) of its own accord: it would display as another.
    const email = parseEmailAddress(`jane@${input}`);
    expect(email.validFormat).toBe(ascii !== null && !INVISIBLE.test(input));
    if (ascii !== null) expect(email.domain).toBe(ascii);
  });

  it.each(['xn--zz.com', 'xn--a.com', 'xn--ample.com'])('user@%s: not a valid format, and says why', (domain) => {
    expect(parseEmailAddress(`user@${domain}`)).toMatchObject({ validFormat: false, formatProblem: 'the domain is not a valid internationalised domain name (UTS #46)' });
    expect(parseName(domain, DNS_NAME)).toEqual({ ok: false, reason: 'an xn-- label that is not a valid A-label (UTS #46)' });
  });
});

describe('no verdict comes from the runtime\'s IDNA or URL parser', () => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => relative(src, join(src, f)));
  /** The global URL parser where no verdict hangs on it: a configured upstream's URL, a module's own file URL. */
  const URL_ALLOWED = new Set(['config.ts', 'adapters/password/pool.ts', 'adapters/files/worker-script.ts']);

  it('src/ never calls domainToASCII or domainToUnicode', () => {
    expect(files.filter((f) => /domainTo(?:ASCII|Unicode)/.test(readFileSync(join(src, f), 'utf8')))).toEqual([]);
  });

  it('src/ parses URLs with the standard\'s own parser (src/domain/url.ts), but where no verdict depends on it', () => {
    const uses = files.filter((f) => /\bnew URL\(|\bURL\.(?:parse|canParse)\(/.test(readFileSync(join(src, f), 'utf8')));
    expect(uses.filter((f) => !URL_ALLOWED.has(f))).toEqual([]);
  });
});
