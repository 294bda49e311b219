// Spec-driven fuzzing: every operation of openapi.yaml gets requests generated from its own parameter and requestBody
// schemas (valid values, examples, and deliberately invalid variants), so a new operation is fuzzed with no new test code.
// Each answer must be documented for its operation (the harness checks status and body), never a 500, never an echo of
// a submitted body string, and a 400 names only fields the operation declares.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContractValidator } from '../../src/http/contract-validator.js';
import { loadSpec } from '../../src/http/spec.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startUpstreams, type Upstreams } from '../faults/fixtures.js';
import { anyText, apiKeyChoice, encodeText, expectNoEcho, extraHeaders, jsonBody, leavesLoopback, pathSegment, SEED } from './arbitraries.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

type Schema = Record<string, any>;
const { document } = await loadSpec();

/** Resolve local $refs (`#/components/...`) recursively. */
function deref(node: any, seen = new Set<string>()): any {
  if (Array.isArray(node)) return node.map((n) => deref(n, seen));
  if (!node || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') {
    if (seen.has(node.$ref)) return {};
    const target = node.$ref
      .slice(2)
      .split('/')
      .reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    return deref(target, new Set([...seen, node.$ref]));
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(v, seen)]));
}

interface Param {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
  examples: unknown[];
}

interface SpecOperation {
  operationId: string;
  method: string;
  template: string;
  params: Param[];
  body: { schema: Schema; examples: unknown[] } | null;
  /** A bulk operation (`x-bulk-of`): its items are the single operation's inputs, echoed in its results by design. */
  bulk: boolean;
}

const examplesOf = (o: any): unknown[] => [...Object.values(o?.examples ?? {}).map((e: any) => e?.value), ...(o?.example !== undefined ? [o.example] : [])].filter((v) => v !== undefined);

const OPERATIONS: SpecOperation[] = Object.entries<any>(document.paths).flatMap(([template, item]) =>
  Object.entries<any>(item)
    // The System tag's routes (/healthz, /metrics, /docs...) are served outside the API: test/contract/system-routes.test.ts.
    .filter(([, op]) => op?.operationId && !op.tags?.includes('System'))
    .map(([method, raw]) => {
      const op = deref(raw);
      const json = op.requestBody?.content?.['application/json'];
      return {
        operationId: op.operationId,
        method: method.toUpperCase(),
        template,
        params: [...(deref(item.parameters) ?? []), ...(op.parameters ?? [])].map((p: any) => ({
          name: p.name,
          in: p.in,
          required: Boolean(p.required),
          schema: p.schema ?? {},
          examples: examplesOf(p),
        })),
        body: json ? { schema: json.schema ?? {}, examples: examplesOf(json) } : null,
        bulk: typeof op['x-bulk-of'] === 'string',
      };
    }),
);

const typesOf = (s: Schema): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : ['string']);

const FORMATS: Record<string, fc.Arbitrary<string>> = { ipv4: fc.ipV4(), ipv6: fc.ipV6() };

/**
 * Strings of a schema's `anyOf` branches, `format` or `pattern` (fast-check builds no lookahead: it is dropped to
 * generate, and the whole pattern filters); null when the schema gives no shape.
 */
function shapedString(s: Schema, min: number, max: number): fc.Arbitrary<string> | null {
  const fits = (v: string) => [...v].length >= min && [...v].length <= max;
  if (Array.isArray(s.anyOf)) {
    const branches = s.anyOf.map((b: Schema) => shapedString(b, min, max)).filter((a: fc.Arbitrary<string> | null): a is fc.Arbitrary<string> => a !== null);
    return branches.length ? fc.oneof(...branches) : null;
  }
  if (typeof s.format === 'string' && FORMATS[s.format]) return FORMATS[s.format].filter(fits);
  if (typeof s.pattern !== 'string') return null;
  const whole = new RegExp(s.pattern, 'u');
  try {
    return fc.stringMatching(new RegExp(s.pattern.replace(/\(\?[=!][^()]*\)/g, ''), 'u')).filter((v) => fits(v) && whole.test(v));
  } catch {
    return null;
  }
}

/** Values the schema accepts (examples, enum members, then by type and bounds). */
function validFor(s: Schema, examples: unknown[] = []): fc.Arbitrary<unknown> {
  const options: Array<fc.Arbitrary<unknown>> = [];
  if (examples.length) options.push(fc.constantFrom(...examples));
  if (Array.isArray(s.enum)) options.push(fc.constantFrom(...s.enum));
  for (const t of typesOf(s)) {
    if (t === 'string') {
      const min = s.minLength ?? 0;
      const max = Math.min(s.maxLength ?? 64, 200);
      const shaped = shapedString(s, min, max);
      if (shaped) options.push(shaped);
      else options.push(fc.string({ minLength: min, maxLength: Math.max(min, max) }), fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.max(min, Math.min(max, 40)) }));
    } else if (t === 'integer') options.push(fc.integer({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6 }));
    else if (t === 'number') options.push(fc.double({ noNaN: true, noDefaultInfinity: true, min: s.minimum ?? -1e6, max: s.maximum ?? 1e6 }));
    else if (t === 'boolean') options.push(fc.boolean());
    else if (t === 'null') options.push(fc.constant(null));
    else if (t === 'array') options.push(fc.array(validFor(s.items ?? {}), { maxLength: 4 }));
    else if (t === 'object') {
      const props = Object.fromEntries(Object.entries<Schema>(s.properties ?? {}).map(([k, v]) => [k, validFor(v, examplesOf(v))]));
      options.push(fc.record(props, { requiredKeys: (s.required ?? []).filter((k: string) => k in props) }));
    }
  }
  return options.length ? fc.oneof(...options) : fc.jsonValue();
}

/** Values the schema refuses: other JSON types, out-of-bounds lengths, missing or mistyped properties, hostile text. */
function invalidFor(s: Schema): fc.Arbitrary<unknown> {
  const types = typesOf(s);
  const others = ([
    types.includes('string') ? null : anyText,
    types.includes('number') || types.includes('integer') ? null : fc.oneof(fc.integer(), fc.double(), fc.constantFrom(1e308, -0, Number.MAX_SAFE_INTEGER + 2)),
    types.includes('boolean') ? null : fc.boolean(),
    types.includes('null') ? null : fc.constant(null),
    types.includes('array') ? null : fc.array(fc.jsonValue(), { maxLength: 3 }),
    types.includes('object') ? null : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 3 }),
  ] as Array<fc.Arbitrary<unknown> | null>).filter((a): a is fc.Arbitrary<unknown> => a !== null);
  const options = [...others];
  if (types.includes('string')) {
    if (typeof s.maxLength === 'number') options.push(fc.string({ minLength: s.maxLength + 1, maxLength: s.maxLength + 40 }));
    if ((s.minLength ?? 0) > 0) options.push(fc.constant(''));
    options.push(anyText);
  }
  if (types.includes('object') && s.properties) {
    const valid = validFor({ ...s, required: Object.keys(s.properties) }) as fc.Arbitrary<Record<string, unknown>>;
    for (const req of s.required ?? []) options.push(valid.map((o) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== req))));
    for (const [name, prop] of Object.entries<Schema>(s.properties)) options.push(fc.tuple(valid, invalidFor(prop)).map(([o, bad]) => ({ ...o, [name]: bad })));
    options.push(fc.tuple(valid, fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue(), { maxKeys: 3 })).map(([o, extra]) => ({ ...extra, ...o })));
  }
  return fc.oneof(...options);
}

interface Generated {
  path: string;
  body: string | undefined;
  contentType: string | null;
  headers: Record<string, string>;
  key: string | null;
  /** Strings submitted in the body (none may come back). */
  secrets: string[];
}

const stringLeaves = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(stringLeaves) : v && typeof v === 'object' ? Object.values(v).flatMap(stringLeaves) : [];

/** Requests for one operation, built only from what openapi.yaml says about it. */
function requestsFor(op: SpecOperation, validKey: string): fc.Arbitrary<Generated> {
  const wire = (v: unknown) => encodeText(typeof v === 'string' ? v : JSON.stringify(v) ?? '');
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const pathArb = fc
    .tuple(
      ...pathParams.map((p) =>
        fc.oneof({ weight: 3, arbitrary: validFor(p.schema, p.examples).map(wire) }, { weight: 1, arbitrary: invalidFor(p.schema).map(wire) }, { weight: 1, arbitrary: pathSegment }),
      ),
    )
    .map((values) => pathParams.reduce((t, p, i) => t.replace(`{${p.name}}`, values[i] as string), op.template));
  const queryArb = fc
    .tuple(
      ...queryParams.map((p) =>
        fc.oneof(
          { weight: 3, arbitrary: validFor(p.schema, p.examples).map((v) => [`${p.name}=${wire(v)}`]) },
          { weight: 1, arbitrary: invalidFor(p.schema).map((v) => [`${p.name}=${wire(v)}`]) },
          { weight: 1, arbitrary: fc.constant([] as string[]) },
          { weight: 1, arbitrary: fc.tuple(validFor(p.schema), validFor(p.schema)).map(([a, b]) => [`${p.name}=${wire(a)}`, `${p.name}=${wire(b)}`]) },
        ),
      ),
      fc.array(fc.tuple(anyText, anyText).map(([k, v]) => `${encodeText(k)}=${encodeText(v)}`), { maxLength: 2 }),
    )
    .map((parts) => parts.flat().join('&'));
  // A bulk body's items are IBANs, BICs or addresses its results echo (card numbers among them masked: test/contract/bulk.test.ts).
  const secretsOf = (v: unknown): string[] => (op.bulk ? [] : stringLeaves(v));
  const bodyArb: fc.Arbitrary<{ text: string | undefined; contentType: string | null; secrets: string[] }> = op.body
    ? fc.oneof(
        { weight: 3, arbitrary: validFor(op.body.schema, op.body.examples).map((v) => ({ text: JSON.stringify(v), contentType: 'application/json', secrets: secretsOf(v) })) },
        { weight: 2, arbitrary: invalidFor(op.body.schema).map((v) => ({ text: JSON.stringify(v) ?? 'null', contentType: 'application/json', secrets: secretsOf(v) })) },
        { weight: 1, arbitrary: jsonBody(Object.keys(op.body.schema.properties ?? { value: 1 })[0]).map((b) => ({ text: b.text, contentType: b.contentType, secrets: b.secret ? [b.secret] : [] })) },
      )
    : fc.constant({ text: undefined, contentType: null, secrets: [] });
  return fc.record({ path: pathArb, query: queryArb, body: bodyArb, headers: extraHeaders, key: apiKeyChoice(validKey) }).map(({ path, query, body, headers, key }) => ({
    path: query ? `${path}?${query}` : path,
    body: body.text,
    contentType: body.contentType,
    headers,
    key,
    secrets: body.secrets,
  }));
}

/** Field names a 400 may cite for an operation: its parameters, its body's properties, or the body as a whole. */
function declaredFields(op: SpecOperation): Set<string> {
  return new Set(['body', 'request', ...op.params.map((p) => p.name), ...Object.keys(op.body?.schema.properties ?? {})]);
}

let up: Upstreams;
let h: Harness;
const requested = new Map<string, number>();

beforeAll(async () => {
  // The spec's examples use example.com: let it resolve (to a documentation address, refused as a TLS target).
  up = await startUpstreams({
    zone: {
      'example.com': [
        { type: 'A', data: '192.0.2.1' },
        { type: 'MX', data: { preference: 10, exchange: 'mail.example.com' } },
        { type: 'TXT', data: 'v=spf1 -all' },
      ],
    },
  });
  // Strict TLS targets (private ones refused, never connected to); generated domains resolve through the local DNS server only.
  const { ALLOW_PRIVATE_TARGETS: _allowed, ...env } = up.env;
  h = await startHarness({ ...env, DNS_TIMEOUT_MS: '500', TLS_TIMEOUT_MS: '500', QUOTA_PER_DAY: '100000000', QUOTA_PER_MONTH: '100000000' });
});
afterAll(async () => {
  await h.close();
  await up.close();
});

describe('spec-driven fuzzing', () => {
  it('enumerates every operation the contract declares and the server routes', () => {
    const system = new Set(Object.values<any>(document.paths).flatMap((item) => Object.values<any>(item).filter((op) => op?.tags?.includes('System')).map((op) => op.operationId)));
    const declared = createContractValidator(document).operationIds().filter((id) => !system.has(id)).sort();
    expect(OPERATIONS.map((o) => o.operationId).sort()).toEqual(declared);
    expect(Object.keys(h.composition.deps.handlers).sort()).toEqual(declared);
  });

  it.each(OPERATIONS.map((op) => [op.operationId, op] as const))('%s: generated requests get documented answers, never a 500 or an echo', { timeout: 300_000 }, async (_id, op) => {
    const fields = declaredFields(op);
    await fc.assert(
      fc.asyncProperty(requestsFor(op, h.key), async (g) => {
        const headers = g.contentType ? { ...g.headers, 'content-type': g.contentType } : g.headers;
        fc.pre(!leavesLoopback(g.path));
        const res = await h.call(g.path, { method: op.method, headers, body: g.body, key: g.key });
        requested.set(op.operationId, (requested.get(op.operationId) ?? 0) + 1);
        expect(res.status, res.text.slice(0, 200)).not.toBe(500);
        if (res.status === 400) for (const d of res.body.details) expect(fields, `${g.path} -> ${res.text.slice(0, 200)}`).toContain(d.field);
        for (const secret of g.secrets) expectNoEcho(secret, res, op.operationId === 'checkPasswordStrength' && res.status === 200);
      }),
      // Bounded in count, not in time (a time limit would make the verdict depend on the machine's load).
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('sent requests to every operation', () => {
    for (const op of OPERATIONS) expect(requested.get(op.operationId) ?? 0, op.operationId).toBeGreaterThanOrEqual(RUNS / 2);
  });
});
