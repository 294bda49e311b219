// The libraries whose insides we rely on (subclassed, private fields read, behaviour beyond their documented surface)
// or whose answers are verdicts (IDNA) hold only for the versions verified: package.json pins each exactly, the
// installed one must be that one, and ADR 0020 lists it with the upgrade procedure. (zxcvbn-ts: zxcvbn-versions.test.ts.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** name -> [version, where package.json pins it]: a dependency of ours, or an override of a dependency's dependency. */
const PINNED: Record<string, [string, 'dependencies' | 'overrides']> = {
  // src/http/openapi-router.ts and request-validator.ts subclass OpenAPIRouter and OpenAPIValidator and rely on the call order of handleRequest.
  'openapi-backend': ['5.21.2', 'dependencies'],
  // src/adapters/limits/cluster-counters.ts reads RateLimiterClusterMaster's private _rateLimiters; redis-counters.ts subclasses RateLimiterMemory.
  'rate-limiter-flexible': ['11.4.0', 'dependencies'],
  // src/http/json-body.ts maps koa-body's refusals by their shapes and messages and canonicalises Content-Encoding for its inflater.
  'koa-body': ['8.0.1', 'dependencies'],
  // koa-body's body parser: the strict-JSON message and the exact lower-case coding names json-body.ts relies on.
  'co-body': ['6.2.0', 'overrides'],
  // src/domain/idna.ts and url.ts: verdicts (ADR 0021); a new Unicode version is a deliberate change.
  tr46: ['7.0.0', 'dependencies'],
  'whatwg-url': ['17.3.0', 'dependencies'],
  // src/http/system-routes.ts: GET /docs's encoding by the `preferred` option, typed by us in src/http/negotiator.d.ts.
  negotiator: ['1.1.0', 'dependencies'],
};

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<'dependencies' | 'overrides', Record<string, unknown>>;
const adr = readFileSync(new URL('../../docs/adr/0020-library-reach-ins.md', import.meta.url), 'utf8');
const installed = (name: string) => (JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;
const rows = Object.entries(PINNED).map(([name, [version, where]]) => [name, version, where] as const);

describe('libraries pinned for their insides', () => {
  it.each(rows)('package.json pins %s to %s exactly (%s)', (name, version, where) => {
    expect(manifest[where][name]).toBe(version);
  });

  it.each(rows)('the installed %s is %s', (name, version) => {
    expect(installed(name)).toBe(version);
  });

  it.each(rows)('ADR 0020 lists %s %s', (name, version) => {
    expect(adr).toContain(`\`${name}\` ${version}`);
  });
});
