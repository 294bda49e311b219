// openapi.yaml's input schemas are exactly as strict as the service: for every input of every operation, a value the
// schema accepts never gets a 400 for its form (only VALIDATION_ERROR, a well-formed request refused, e.g. a private TLS
// target), and a value the schema refuses always gets 400 INVALID_FORMAT or MISSING_PARAMETER. Candidates come from
// generators near each schema's edges (valid values, single-character mutations, over-long values, any text); each is
// judged by the schema itself (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 says) and then sent to the running service.
// @module-tag slow (left out of make test-fast): thousands of requests, zxcvbn among them
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { domainToAscii } from '../../src/domain/idna.js';
import { loadSpec } from '../../src/http/spec.js';
import { startGuardedService, type Upstreams } from '../faults/fixtures.js';
import { anyText, encodeText, leavesLoopback } from '../fuzz/arbitraries.js';
import type { Harness, TestResponse } from '../support/harness.js';

const RUNS = Number(process.env.STRICTNESS_RUNS ?? 200);
const SEED = 0x5c4e3a;
const { document } = await loadSpec();

const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats.default(ajv as any);
ajv.addSchema(document, 'openapi');

/** One input of one operation: where it goes, how candidates for it are made, how one is sent. */
interface Input {
  operationId: string;
  /** `path:NAME`, `query:NAME` or `body`, as openapi.yaml declares it. */
  input: string;
  candidates: fc.Arbitrary<unknown>;
  send(h: Harness, value: unknown): Promise<TestResponse>;
  /** A refusal that is no verdict on the value's form (VALIDATION_ERROR for a non-public TLS target or a special-use DNS name). */
  policyRefusal?: string;
  /** Values the schema cannot judge, as openapi.yaml says of this input (none when absent). */
  beyondPatterns?: (value: unknown) => boolean;
}

const deref = (node: any): any => (node?.$ref ? (node.$ref as string).slice(2).split('/').reduce((o: any, k: string) => o[k], document) : node);

/** The schema of an input as openapi.yaml declares it, compiled once. */
function schemaOf(operationId: string, input: string): ValidateFunction {
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (op?.operationId !== operationId) continue;
      if (input === 'body') {
        const at = `openapi#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/requestBody/content/application~1json/schema`;
        return ajv.compile({ $ref: at });
      }
      const [where, name] = input.split(':');
      const param = (op.parameters ?? []).map(deref).find((p: any) => p.in === where && p.name === name);
      if (param) return ajv.compile(param.schema);
    }
  }
  throw new Error(`openapi.yaml has no ${input} on ${operationId}`);
}

/** Every input openapi.yaml declares on the API's operations (the System tag's routes take none). */
function declaredInputs(): string[] {
  return Object.values<any>(document.paths).flatMap((item) =>
    Object.values<any>(item)
      .filter((op) => op?.operationId && !op.tags?.includes('System'))
      .flatMap((op) => [
        ...(op.parameters ?? []).map(deref).map((p: any) => `${op.operationId} ${p.in}:${p.name}`),
        ...(op.requestBody ? [`${op.operationId} body`] : []),
      ]),
  );
}

/** A path or query value as the server will decode it (a lone surrogate travels as U+FFFD). */
const onTheWire = (v: string) => Buffer.from(v, 'utf8').toString('utf8');

const oddChar = fc.oneof(
  fc.constantFrom(...' -_.:/%@[]#?+,\t\r\n\u00a0\u200b\u3002\uff0e0x'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
/** Valid values, their one-character mutations and repetitions, and any text at all. */
function near(valid: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const mutated = fc.tuple(valid, fc.nat(), oddChar).map(([s, i, c]) => s.slice(0, i % (s.length + 1)) + c + s.slice(i % (s.length + 1)));
  const dropped = fc.tuple(valid, fc.nat()).map(([s, i]) => s.slice(0, i % (s.length + 1)) + s.slice((i % (s.length + 1)) + 1));
  return fc.oneof(
    { weight: 5, arbitrary: valid },
    { weight: 3, arbitrary: mutated },
    { weight: 1, arbitrary: dropped },
    { weight: 1, arbitrary: valid.map((s) => s.repeat(6)) },
    { weight: 1, arbitrary: anyText },
  );
}

const sample = (chars: string) => fc.constantFrom(...[...chars]);
const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** Letters of left-to-right scripts that UTS #46 keeps or maps (Latin, Greek, Cyrillic, CJK, kana, Hangul). */
const idnLetters = sample('äöüßéèçñåøæþðÄÖÜÉαβγδεζηθλμπσωΣжзийклмнопрстуфЖ日本語中文字ひらがなカタカナ한국어');
const asciiLabel = (underscore: boolean) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.stringMatching(underscore ? /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,8}[A-Za-z0-9_])?$/ : /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,8}[A-Za-z0-9])?$/) },
    { weight: 1, arbitrary: fc.constantFrom('123', '0', '0x1f', '0x', '0xg', 'xn--bcher-kva', 'xn--zz', 'a'.repeat(63), 'b'.repeat(64), 'com', 'test', '_dmarc', 'a_b', '-a', 'a-') },
  );
const idnLabel = fc.array(fc.oneof(idnLetters, sample(letters), sample('0123456789')), { minLength: 1, maxLength: 8 }).map((a) => a.join(''));
const dnsName = (underscore: boolean, minLabels: number) =>
  fc
    .tuple(fc.array(fc.oneof({ weight: 3, arbitrary: asciiLabel(underscore) }, { weight: 1, arbitrary: idnLabel }), { minLength: minLabels, maxLength: 5 }), fc.boolean())
    .map(([labels, dot]) => labels.join('.') + (dot ? '.' : ''));

const typeList = fc
  .tuple(
    fc.array(fc.tuple(fc.constantFrom('A', 'AAAA', 'MX', 'TXT', 'CNAME', 'NS', 'SOA', 'PTR', 'ANY'), fc.boolean()), { minLength: 1, maxLength: 5 }),
    fc.constantFrom(',', ', ', ' , ', ',,'),
  )
  .map(([types, sep]) => types.map(([t, lower]) => (lower ? t.toLowerCase() : t)).join(sep));

const ipAddress = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.constantFrom('fe80::1%eth0', '[::1]', '01.2.3.4', '::ffff:81.2.69.142'));
/** TLS targets never leave this machine: IP literals come from non-public ranges (refused before any connection). */
const privateIp = fc.oneof(
  fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`),
  fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `192.168.${a}.${b}`),
  fc.nat(0xffff).map((x) => `fd00::${x.toString(16)}`),
  fc.constantFrom('127.0.0.1', '::1', '::ffff:10.0.0.1', '0.0.0.0', '169.254.169.254', '2130706433', '0x7f.1', '127.1', '[::1]'),
);

const withDigit = fc
  .tuple(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.stringMatching(/^[0-9]{1,19}$/), fc.string({ unit: 'grapheme', maxLength: 30 }))
  .map(([a, d, b]) => a + d + b);
const astral = (units: string, min: number, max: number) => fc.string({ unit: sample(units), minLength: min, maxLength: max });

/**
 * The one thing a pattern cannot say of a domain (DnsName and TlsHost in openapi.yaml): whether UTS #46 converts a
 * non-ASCII name or accepts an `xn--` label, and whether its A-labels then fit in 63 and 253 characters. Such names
 * are left to the service.
 */
function idnBeyondPatterns(value: unknown): boolean {
  if (typeof value !== 'string' || (/^[\x00-\x7f]*$/.test(value) && !/(?:^|\.)xn--/i.test(value))) return false;
  const ascii = domainToAscii(value.replace(/\.$/, ''));
  return ascii === null || ascii.length > 253 || ascii.split('.').some((l) => l.length > 63);
}

const path = (h: Harness, template: string, value: unknown) => h.call(template.replace('{}', encodeText(value as string)));
const post = (h: Harness, url: string, body: unknown) =>
  h.call(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) ?? 'null' });

const INPUTS: Input[] = [
  {
    operationId: 'validateIban',
    input: 'path:iban',
    candidates: near(fc.oneof(fc.stringMatching(/^[ -]{0,2}[A-Za-z0-9][A-Za-z0-9 -]{0,40}$/), fc.constantFrom('DE89370400440532013000', 'DE89 3704 0044 0532 0130 00', '---'))),
    send: (h, v) => path(h, '/api/v1/iban/{}', v),
  },
  {
    operationId: 'validateBic',
    input: 'path:bic',
    candidates: near(fc.oneof(fc.stringMatching(/^[ -]{0,2}[A-Za-z0-9][A-Za-z0-9 -]{0,12}$/), fc.constantFrom('DEUTDEFF', 'DEUT DE FF 500', ' - '))),
    send: (h, v) => path(h, '/api/v1/bic/{}', v),
  },
  {
    operationId: 'lookupDns',
    input: 'path:domain',
    candidates: near(fc.oneof(dnsName(true, 1), fc.constantFrom('localhost', '000', '0x7f.1', '1.2.3.4', 'example.123', 'bücher.test', '_dmarc.ok.test'))),
    send: (h, v) => path(h, '/api/v1/dns/{}', v),
    // Special-use and single-label names (RFC 6761/6762/8375) are well-formed but refused by policy (issue #29).
    policyRefusal: 'VALIDATION_ERROR',
    beyondPatterns: idnBeyondPatterns,
  },
  {
    operationId: 'lookupDns',
    input: 'query:type',
    candidates: near(typeList),
    send: (h, v) => h.call(`/api/v1/dns/ok.test?type=${encodeText(v as string)}`),
  },
  {
    operationId: 'inspectTlsCertificate',
    input: 'path:domain',
    candidates: near(fc.oneof({ weight: 3, arbitrary: dnsName(false, 2) }, { weight: 1, arbitrary: privateIp }, { weight: 1, arbitrary: fc.constantFrom('localhost', '000', 'a_b.test', 'bücher.test') })),
    send: (h, v) => path(h, '/api/v1/ssl/{}', v),
    policyRefusal: 'VALIDATION_ERROR',
    beyondPatterns: idnBeyondPatterns,
  },
  {
    operationId: 'lookupIp',
    input: 'path:ip',
    candidates: near(ipAddress),
    send: (h, v) => path(h, '/api/v1/ip/{}', v),
  },
  {
    operationId: 'validateEmail',
    input: 'query:address',
    candidates: fc.oneof(near(fc.emailAddress()), fc.constant(''), astral('😀a@.', 150, 330), fc.string({ unit: 'grapheme', minLength: 300, maxLength: 330 })),
    send: (h, v) => h.call(`/api/v1/email?address=${encodeText(v as string)}`),
  },
  {
    operationId: 'validateEmail',
    input: 'query:smtp',
    candidates: fc.oneof(fc.constantFrom('true', 'false', 'TRUE', 'True', '1', '0', 'yes', ''), fc.string({ maxLength: 6 })),
    // SMTP_CHECK is off here: a valid value answers not_checked/disabled, nothing connects.
    send: (h, v) => h.call(`/api/v1/email?address=info%40example.com&smtp=${encodeText(v as string)}`),
  },
  {
    operationId: 'validateCard',
    input: 'body',
    candidates: fc.oneof(
      { weight: 4, arbitrary: fc.oneof(near(withDigit), astral('😀1', 30, 70), fc.constant('')).map((cardNumber) => ({ cardNumber })) },
      { weight: 1, arbitrary: fc.oneof(fc.jsonValue(), fc.record({ cardNumber: fc.jsonValue() })) },
    ),
    send: (h, v) => post(h, '/api/v1/creditcard/validate', v),
  },
  ...(
    [
      ['validateIbans', '/api/v1/iban/bulk', 'DE89 3704 0044 0532 0130 00'],
      ['validateBics', '/api/v1/bic/bulk', 'DEUTDEFF500'],
      ['validateEmails', '/api/v1/email/bulk', 'info@example.com'],
    ] as const
  ).map(([operationId, url, valid]): Input => ({
    operationId,
    input: 'body',
    // Item lists near the edges (none, one, several, more than BULK_MAX_ITEMS), and bodies of any other shape.
    candidates: fc.oneof(
      { weight: 4, arbitrary: fc.array(near(fc.constant(valid)), { minLength: 0, maxLength: 4 }).map((items) => ({ items })) },
      {
        weight: 1,
        arbitrary: fc.constantFrom({ items: Array(1000).fill(valid) }, { items: Array(1001).fill(valid) }, { items: [valid], more: 1 }, { items: valid }, { items: [valid], smtp: true }, { items: [valid], smtp: 'true' }, { items: [valid], smtp: null }),
      },
      { weight: 1, arbitrary: fc.oneof(fc.jsonValue(), fc.record({ items: fc.jsonValue() })) },
    ),
    send: (h, v) => post(h, url, v),
  })),
  {
    operationId: 'checkPasswordStrength',
    input: 'body',
    candidates: fc.oneof(
      { weight: 4, arbitrary: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 })).map((password) => ({ password })) },
      { weight: 1, arbitrary: fc.oneof(fc.jsonValue(), fc.record({ password: fc.jsonValue() })) },
    ),
    send: (h, v) => post(h, '/api/v1/password/strength', v),
  },
];

let up: Upstreams;
let h: Harness;

// Strict TLS targets: a non-public one is refused (VALIDATION_ERROR) before any connection.
beforeAll(async () => ({ up, h } = await startGuardedService()));
afterAll(async () => {
  await h?.close();
  await up?.close();
});

describe('input schemas of openapi.yaml are exactly as strict as the service', () => {
  it('covers every input of every API operation', () => {
    expect(INPUTS.map((i) => `${i.operationId} ${i.input}`).sort()).toEqual(declaredInputs().sort());
  });

  it.each(INPUTS.map((i) => [`${i.operationId} ${i.input}`, i] as const))('%s: accepted means no 400 for its form, refused means 400', { timeout: 300_000 }, async (_name, input) => {
    const accepts = schemaOf(input.operationId, input.input);
    const seen = { accepted: 0, refused: 0, beyond: 0 };
    await fc.assert(
      fc.asyncProperty(input.candidates, async (raw) => {
        const value = typeof raw === 'string' ? onTheWire(raw) : raw;
        // A path segment of "" routes elsewhere and "." or ".." is resolved away by URL rules: not this input's value.
        if (input.input.startsWith('path:')) fc.pre(value !== '' && value !== '.' && value !== '..');
        if (input.operationId === 'inspectTlsCertificate') fc.pre(!leavesLoopback(`/api/v1/ssl/${encodeText(value as string)}`));
        const ok = accepts(value);
        if (ok && input.beyondPatterns?.(value)) {
          seen.beyond++;
          return;
        }
        const res = await input.send(h, value);
        const where = `${JSON.stringify(value)?.slice(0, 120)} -> ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, where).not.toBe(500);
        if (ok) {
          seen.accepted++;
          if (res.status === 400) expect(res.body.code, `the schema accepts ${where}`).toBe(input.policyRefusal ?? 'no 400');
        } else {
          seen.refused++;
          expect(res.status, `the schema refuses ${where}`).toBe(400);
          expect(['INVALID_FORMAT', 'MISSING_PARAMETER'], where).toContain(res.body.code);
        }
      }),
      // Bounded in count, not in time (a time limit would make the verdict depend on the machine's load).
      { seed: SEED, numRuns: RUNS },
    );
    // Both sides of the schema were explored.
    expect(seen.accepted, 'accepted values tried').toBeGreaterThanOrEqual(RUNS / 10);
    expect(seen.refused, 'refused values tried').toBeGreaterThanOrEqual(RUNS / 10);
    expect(seen.beyond, 'values left to the service').toBeLessThanOrEqual(RUNS / 5);
  });
});
