// Property-based HTTP fuzzing per operation (fast-check, fixed seed) against the real server: hostile path segments,
// query strings, headers, methods and JSON bodies never give a 500, every answer honours openapi.yaml (the harness
// checks status and body), and no answer echoes a submitted password or card number.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness, TestResponse } from '../support/harness.js';
import { unexpectedErrors } from '../faults/fault-net.js';
import { startGuardedService, type Upstreams } from '../faults/fixtures.js';
import { anyText, apiKeyChoice, expectNoEcho, extraHeaders, hugeText, jsonBody, leavesLoopback, pathSegment, queryString, SEED } from './arbitraries.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 100);

let up: Upstreams;
let h: Harness;

// Strict TLS targets: private ones are refused (400) rather than connected to.
beforeAll(async () => ({ up, h } = await startGuardedService()));
afterAll(async () => {
  await h.close();
  await up.close();
});

function never500(res: TestResponse): void {
  expect(res.status, res.text.slice(0, 200)).not.toBe(500);
}

/**
 * Runs are bounded in count, not in time: a time limit made the verdict depend on the machine's load (a starved run
 * was interrupted and failed). The test timeout is the hang guard.
 */
const property = <T extends unknown[]>(runs: number, prop: fc.IAsyncProperty<T>) => fc.assert(prop, { seed: SEED, numRuns: runs });
const LONG = { timeout: 300_000 };

describe.each([
  ['validateIban', '/api/v1/iban/'],
  ['validateBic', '/api/v1/bic/'],
  ['lookupDns', '/api/v1/dns/'],
  ['inspectTlsCertificate', '/api/v1/ssl/'],
  ['lookupIp', '/api/v1/ip/'],
])('%s', (_operationId, base) => {
  it('any path segment, headers and key: a documented answer, never a 500', LONG, async () => {
    await property(
      RUNS,
      fc.asyncProperty(pathSegment, extraHeaders, apiKeyChoice('KEY'), async (segment, headers, key) => {
        fc.pre(!leavesLoopback(`${base}${segment}`));
        never500(await h.call(`${base}${segment}`, { headers, key: key === 'KEY' ? h.key : key }));
      }),
    );
  });
});

describe('query strings', () => {
  it.each([
    ['lookupDns', '/api/v1/dns/ok.test', ['type']],
    ['validateEmail', '/api/v1/email', ['address']],
    ['validateBic', '/api/v1/bic/DEUTDEFF', ['bic']],
    ['lookupOwnIp', '/api/v1/ip', ['ip']],
    ['getUsage', '/api/v1/usage', ['key']],
  ])('%s: any query string: a documented answer, never a 500', LONG, async (_operationId, path, names) => {
    await property(
      RUNS / 2,
      fc.asyncProperty(queryString(names), async (qs) => {
        never500(await h.call(`${path}?${qs}`));
      }),
    );
  });

  it('validateEmail: any address value (10 KB too)', LONG, async () => {
    await property(
      RUNS,
      fc.asyncProperty(fc.oneof(anyText, fc.emailAddress(), hugeText), async (address) => {
        never500(await h.call(`/api/v1/email?address=${encodeURIComponent(address.replace(/[\ud800-\udfff]/g, '?'))}`));
      }),
    );
  });
});

describe('methods and unknown paths', () => {
  it('any method on any path: 404/405 ErrorInfo, never a 500', LONG, async () => {
    const paths = ['/api/v1/iban/DE89370400440532013000', '/api/v1/password/strength', '/api/v1/ip', '/api/v1/usage', '/api/v2/x', '/api/v1/', '/api', '/nope', '/api/v1/bic'];
    await property(
      RUNS,
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'FOO'), fc.constantFrom(...paths), fc.option(pathSegment), async (method, path, tail) => {
        never500(await h.call(tail === null ? path : `${path}/${tail}`, { method }));
      }),
    );
  });
});

describe.each([
  ['checkPasswordStrength', '/api/v1/password/strength', 'password', true, 30],
  ['validateCard', '/api/v1/creditcard/validate', 'cardNumber', false, RUNS],
])('%s', (_operationId, path, field, numbersInBody, runs) => {
  const secretish = fc.oneof(anyText, fc.string({ unit: fc.constantFrom(...'0123456789 -'), minLength: 6, maxLength: 70 }), fc.string({ minLength: 6, maxLength: 300 }));

  it('any JSON body (wrong types, nesting, huge numbers, duplicate keys, not JSON, over 16 KiB): never a 500, never an echo', LONG, async () => {
    await property(
      runs,
      fc.asyncProperty(jsonBody(field, secretish), extraHeaders, async (body, headers) => {
        const res = await h.call(path, {
          method: 'POST',
          headers: body.contentType === null ? headers : { ...headers, 'content-type': body.contentType },
          body: body.text,
        });
        never500(res);
        expectNoEcho(body.secret, res, numbersInBody && res.status === 200);
      }),
    );
  });
});

describe('headers on every operation', () => {
  it('any extra headers and key on each operation: a documented answer, never a 500', LONG, async () => {
    const requests = [
      ['GET', '/api/v1/iban/DE89370400440532013000'],
      ['GET', '/api/v1/bic/DEUTDEFF'],
      ['GET', '/api/v1/dns/ok.test'],
      ['GET', '/api/v1/ssl/ok.test'],
      ['GET', '/api/v1/ip/81.2.69.142'],
      ['GET', '/api/v1/ip'],
      ['GET', '/api/v1/email?address=info@ok.test'],
      ['GET', '/api/v1/usage'],
      ['POST', '/api/v1/creditcard/validate'],
    ] as const;
    await property(
      RUNS,
      fc.asyncProperty(fc.constantFrom(...requests), extraHeaders, apiKeyChoice('KEY'), async ([method, path], headers, key) => {
        const body = method === 'POST' ? JSON.stringify({ cardNumber: '4111 1111 1111 1111' }) : undefined;
        const res = await h.call(path, { method, headers: { ...headers, 'content-type': 'application/json' }, body, key: key === 'KEY' ? h.key : key });
        never500(res);
        expectNoEcho(body ? '4111 1111 1111 1111' : null, res);
      }),
    );
  });
});

describe('afterwards', () => {
  it('logged no unexpected error', () => {
    h.composition.deps.logger.flush();
    expect(unexpectedErrors(h.logs)).toEqual([]);
  });
});
