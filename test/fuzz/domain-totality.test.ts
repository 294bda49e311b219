// The domain functions are total (property-based, fast-check): any string in, a result out, never a throw,
// and every result fits its openapi.yaml schema (IBAN, BIC, card/Luhn, SPF, DMARC, email, TLS target, IP).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateBic, normaliseBic } from '../../src/domain/bic.js';
import { cardBrand, luhnValid, sanitiseCardNumber, validateCard, type BinLookup } from '../../src/domain/card.js';
import { dmarcTags, firstMailto, parseDmarc } from '../../src/domain/dmarc.js';
import { loadEmailLists } from '../../src/adapters/mail/email-lists.js';
import { createEmailClassifier, parseEmailAddress, toAsciiDomain } from '../../src/domain/email.js';
import { normaliseIban, validateIban } from '../../src/domain/iban.js';
import { resolveBic } from '../../src/adapters/bank-data/bank-directory.js';
import { parseLegacyIpv4 } from '../../src/domain/ip-address.js';
import { classifyIp, parseIp } from '../../src/domain/ip-ranges.js';
import { sha1Parts, truncateForAnalysis } from '../../src/domain/password.js';
import { parseSpf, spfTerms } from '../../src/domain/spf.js';
import { parseTlsTarget } from '../../src/domain/tls-target.js';
import { loadSpec } from '../../src/http/spec.js';

const { classifyEmail, suggestDomain } = createEmailClassifier(await loadEmailLists());
const SEED = 20261122;
const RUNS = 400;
const opts = { seed: SEED, numRuns: RUNS };

/** Any text: full Unicode (lone surrogates too), control characters, up to 10 KB now and then. */
const anyText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 80 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...' -.:;=@/%+~?![]\x00\t\r\n0123456789AZaz'), maxLength: 80 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1000, maxLength: 10_000 }) },
);
const alnum = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -'), maxLength: 40 });
/** IBAN-like: a real country code, two digits, then letters/digits/spaces/dashes. */
const ibanish = fc.tuple(fc.constantFrom('DE', 'FR', 'GB', 'NL', 'BE', 'AT', 'CH', 'IT', 'ES', 'LU', 'XX', 'de'), fc.integer({ min: 0, max: 99 }), alnum).map(
  ([c, d, rest]) => `${c}${String(d).padStart(2, '0')}${rest}`,
);
const spfToken = fc.oneof(
  fc.constantFrom('all', '-all', '~all', '?all', '+all', 'a', 'mx', 'ptr', 'a/24', 'mx:/0', 'redirect=', 'exp=', 'ip4:', 'ip6:', 'include:'),
  fc.tuple(fc.constantFrom('', '+', '-', '~', '?'), fc.constantFrom('include:', 'a:', 'mx:', 'ip4:', 'ip6:', 'exists:', 'redirect=', 'exp=', 'x-'), anyText).map(
    ([q, m, v]) => `${q}${m}${v}`,
  ),
);
const spfRecord = fc.tuple(fc.constantFrom('v=spf1', 'V=SPF1', 'v=spf1 ', 'v=spf10', ''), fc.array(spfToken, { maxLength: 15 })).map(([v, t]) => [v, ...t].join(' '));
const dmarcRecord = fc
  .tuple(
    fc.constantFrom('v=DMARC1', ' v = dmarc1 ', 'v=DMARC2', ''),
    fc.array(
      fc.tuple(
        fc.oneof(fc.constantFrom('p', 'sp', 'rua', 'ruf', 'pct', 'adkim', 'P', ' p '), anyText),
        fc.oneof(anyText, fc.constantFrom('none', 'reject', 'quarantine', 'mailto:a@b.c', 'mailto:', '101', '-1')),
      ),
      { maxLength: 8 },
    ),
  )
  .map(([v, tags]) => [v, ...tags.map(([k, val]) => `${k}=${val}`)].join(';'));
const emailish = fc.oneof(
  anyText,
  fc.emailAddress(),
  fc.tuple(anyText, fc.constantFrom('@', '@@', ''), fc.oneof(fc.domain(), anyText)).map(([u, at, d]) => `${u}${at}${d}`),
);
const ipish = fc.oneof(anyText, fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.domain());

const bin: BinLookup = { lookup: (d) => (d.startsWith('4') ? { cardType: 'DEBIT', issuingBank: 'Test Bank', cardCountry: 'DK' } : null) };

let schema: (name: string) => (value: unknown) => string | null;

beforeAll(async () => {
  const { document } = await loadSpec();
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv as any);
  ajv.addSchema(document, 'openapi');
  schema = (name) => {
    const validate = ajv.compile({ $ref: `openapi#/components/schemas/${name}` });
    return (value) => (validate(value) ? null : ajv.errorsText(validate.errors));
  };
});

describe('IBAN (ISO 13616, MOD 97-10)', () => {
  it('validateIban: an IbanResult for any string', () => {
    const check = schema('IbanResult');
    fc.assert(
      fc.property(fc.oneof(anyText, ibanish), (s) => {
        expect(check(validateIban(s, resolveBic))).toBeNull();
        normaliseIban(s);
      }),
      opts,
    );
  });
});

describe('BIC (ISO 9362)', () => {
  it('validateBic: a BicResult for any string', () => {
    const check = schema('BicResult');
    fc.assert(
      fc.property(fc.oneof(anyText, alnum), (s) => {
        expect(check(validateBic(s))).toBeNull();
        normaliseBic(s);
      }),
      opts,
    );
  });
});

describe('card numbers (Luhn, brand, BIN)', () => {
  it('validateCard: a CardValidationResult for any string; never more than four digits of it back', () => {
    const check = schema('CardValidationResult');
    fc.assert(
      fc.property(fc.oneof(anyText, fc.string({ unit: fc.constantFrom(...'0123456789 -'), maxLength: 70 })), (s) => {
        const r = validateCard(s, bin);
        expect(check(r)).toBeNull();
        expect(r.lastFourDigits.length).toBeLessThanOrEqual(4);
      }),
      opts,
    );
  });

  it('luhnValid, cardBrand and sanitiseCardNumber take any string', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        expect(typeof luhnValid(s)).toBe('boolean');
        expect(typeof cardBrand(s)).toBe('string');
        expect(sanitiseCardNumber(s)).toMatch(/^[0-9]*$/);
      }),
      opts,
    );
  });
});

describe('SPF (RFC 7208) and DMARC (RFC 7489) parsing', () => {
  it('parseSpf: an SpfResult for any list of TXT strings', () => {
    const check = schema('SpfResult');
    fc.assert(
      fc.property(fc.array(fc.oneof(spfRecord, anyText), { maxLength: 4 }), (txts) => {
        expect(check(parseSpf(txts))).toBeNull();
        for (const t of txts) spfTerms(t);
      }),
      opts,
    );
  });

  it('parseDmarc: a DmarcResult for any list of TXT strings (with the discovery fields it leaves to its caller)', () => {
    const check = schema('DmarcResult');
    // recordName and organisationalDomain come from discovery (RFC 7489 section 6.6.3), not from parsing a record.
    const discovered = { recordName: '_dmarc.example.test', organisationalDomain: 'example.test' };
    fc.assert(
      fc.property(fc.array(fc.oneof(dmarcRecord, anyText), { maxLength: 4 }), (txts) => {
        expect(check({ ...parseDmarc(txts), ...discovered })).toBeNull();
        for (const t of txts) {
          dmarcTags(t);
          firstMailto(t);
        }
      }),
      opts,
    );
  });
});

describe('email addresses (RFC 5321/5322/6531)', () => {
  it('parseEmailAddress + classifyEmail: an EmailValidationResult for any string', () => {
    const check = schema('EmailValidationResult');
    fc.assert(
      fc.property(emailish, (s) => {
        const parsed = parseEmailAddress(s);
        const deliverability = { status: 'not_checked', reason: parsed.validFormat ? 'not_requested' : 'invalid_format', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null };
        const result = { ...parsed, mxRecord: false, aRecord: false, ...classifyEmail(parsed), deliverability };
        expect(check(result)).toBeNull();
        toAsciiDomain(s);
        suggestDomain(s);
      }),
      opts,
    );
  });
});

describe('TLS targets, IP addresses, passwords', () => {
  it('parseTlsTarget, parseIp, parseLegacyIpv4, classifyIp take any string', () => {
    fc.assert(
      fc.property(ipish, (s) => {
        const t = parseTlsTarget(s);
        expect(['hostname', 'ip', 'numeric-ipv4', 'invalid']).toContain(t.kind);
        const ip = parseIp(s);
        if (ip !== null) expect(classifyIp(ip)).not.toBeNull();
        parseLegacyIpv4(s);
        classifyIp(s);
      }),
      opts,
    );
  });

  it('truncateForAnalysis and sha1Parts take any string; the prefix is 5 hex characters', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        expect([...truncateForAnalysis(s)].length).toBeLessThanOrEqual(128);
        const { prefix, suffix } = sha1Parts(s);
        expect(prefix).toMatch(/^[0-9A-F]{5}$/);
        expect(suffix).toMatch(/^[0-9A-F]{35}$/);
      }),
      opts,
    );
  });
});
