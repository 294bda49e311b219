// The service's own routes (tag System in openapi.yaml: /healthz, /readyz, /metrics, /openapi.*, /docs) are documented
// as they answer: every route the server mounts is in the contract, with its real status, media type and JSON or YAML body.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSystemRoutes } from '../../src/http/system-routes.js';
import { loadSpec } from '../../src/http/spec.js';
import { startHarness, type Harness } from '../support/harness.js';
import { parseYaml } from '../support/yaml.js';

const spec = await loadSpec();
const { document } = spec;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv as any);
ajv.addSchema(document, 'openapi');

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const SYSTEM = Object.entries<any>(document.paths).flatMap(([path, item]) =>
  Object.entries<any>(item)
    .filter(([, op]) => op?.tags?.includes('System'))
    .map(([method, op]) => ({ path, method, operationId: op.operationId as string, op })),
);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('System routes in openapi.yaml', () => {
  it('document every route the server mounts outside the API, and only those, with no key', () => {
    const mounted = createSystemRoutes({ spec, metrics: h.composition.deps.metrics, docsPage: () => null, readiness: () => ({}) }).stack.map((l) => l.path);
    expect(SYSTEM.map((s) => s.path).sort()).toEqual([...new Set(mounted)].sort());
    for (const s of SYSTEM) {
      expect(s.method, s.path).toBe('get');
      expect(s.op.security, s.path).toEqual([]);
    }
  });

  it('are never dispatched as API operations', () => {
    const routed = Object.keys(h.composition.deps.handlers);
    for (const s of SYSTEM) expect(routed).not.toContain(s.operationId);
  });

  it.each(SYSTEM.map((s) => [s.path, s] as const))('GET %s answers a documented status, media type and body', async (_path, s) => {
    const res = await h.fetch(s.path);
    const text = await res.text();
    const response = s.op.responses[String(res.status)];
    expect(response, `${res.status} is documented for ${s.path}`).toBeDefined();
    const resolved = response.$ref ? (response.$ref as string).slice(2).split('/').reduce((o: any, k: string) => o[k], document) : response;
    const type = (res.headers.get('content-type') ?? '').split(';')[0].trim();
    expect(Object.keys(resolved.content ?? {}), `${s.path} answered ${type}`).toContain(type);
    // A JSON or YAML body is checked as a client reads it: parsed, then held to the schema of its media type.
    const parsers: Record<string, (t: string) => unknown> = { 'application/json': JSON.parse, 'application/yaml': parseYaml };
    const parse = parsers[type];
    if (parse) {
      const base = response.$ref ? (response.$ref as string).slice(1) : `/${pointer('paths', s.path, 'get', 'responses', String(res.status))}`;
      const validate = ajv.compile({ $ref: `openapi#${base}/content/${pointer(type)}/schema` });
      expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it.each(SYSTEM.map((s) => [s.path, s] as const))('POST %s answers the documented 405 with Allow', async (_path, s) => {
    const res = await h.fetch(s.path, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(s.op.responses['405']).toBeDefined();
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
