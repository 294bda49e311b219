// The precompiled router against openapi-backend's stock OpenAPIRouter over openapi.yaml: same operation, or same 404/405.
import { OpenAPIBackend, OpenAPIRouter, type Request } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import { PrecompiledRouter, unreadableParameters } from '../../src/http/openapi-router.js';
import { loadSpec } from '../../src/http/spec.js';

/**
 * openapi-backend's own router (5.21.2) with OpenAPI's matching order in front: a concrete path is matched before the
 * templates (OpenAPI 3.1 §4.8.8.2, "Path Templating Matching"), so a path that is one is its own operation or a 405.
 * The stock router alone tries the templates when the concrete path lacks the method: GET /api/v1/bic/bulk becomes
 * validateBic with bic=bulk ('stock router alone' below shows it). Everything else is the stock router's decision.
 */
class ConcreteFirstRouter extends OpenAPIRouter {
  override matchOperation(req: Request): ReturnType<OpenAPIRouter['matchOperation']>;
  override matchOperation(req: Request, strict: boolean): ReturnType<OpenAPIRouter['matchOperation']>;
  override matchOperation(req: Request, strict?: boolean) {
    const normal = this.normalizeRequest(req);
    const path = this.normalizePath(normal.path);
    const concrete = this.getOperations().filter((op) => op.path === path);
    if (concrete.length > 0 && !concrete.some((op) => op.method === normal.method)) {
      if (strict) throw new Error('405-methodNotAllowed: this method is not registered for the route');
      return undefined;
    }
    return strict ? super.matchOperation(req, true) : super.matchOperation(req);
  }
}

let raw: OpenAPIRouter;
let stock: OpenAPIRouter;
let fast: PrecompiledRouter;

beforeAll(async () => {
  const api = new OpenAPIBackend({ definition: structuredClone((await loadSpec()).document) as any, quick: true, validate: false });
  await api.init();
  raw = new OpenAPIRouter({ definition: api.definition });
  stock = new ConcreteFirstRouter({ definition: api.definition });
  fast = new PrecompiledRouter({ definition: api.definition });
});

const req = (method: string, path: string, query: Record<string, string | string[]> = {}): Request => ({ method, path, headers: {}, query });

function outcome(router: OpenAPIRouter, method: string, path: string): string {
  try {
    return router.matchOperation(req(method, path), true).operationId!;
  } catch (err) {
    return (err as Error).message.slice(0, 3);
  }
}

const PATHS = [
  '/api/v1/iban/DE89370400440532013000',
  '/api/v1/iban/DE89%203704%200044%200532%2013%2000',
  '/api/v1/bic/DEUTDEFF',
  '/api/v1/bic/DEUTDEFF/',
  '/api/v1/bic/DEU%2FTDEFF',
  '/api/v1/bic/',
  '/api/v1/bic',
  '/api/v1/dns/example.com',
  '/api/v1/dns/b%C3%BCcher.de',
  '/api/v1/ssl/example.com',
  '/api/v1/ssl/example.com/extra',
  '/api/v1/ip/81.2.69.142',
  '/api/v1/ip/2001%3Adb8%3A%3A1',
  '/api/v1/ip',
  '/api/v1/ip/',
  '/api/v1/email',
  '/api/v1/usage',
  '/api/v1/password/strength',
  '/api/v1/creditcard/validate',
  '/api/v1/creditcard/4111111111111111',
  '/api/v1/nothing-here',
  '/api/v1',
  '/api',
  '/',
  '/healthz',
  '/API/V1/BIC/DEUTDEFF',
  '/api/v1/bic/.',
  '/api/v1/bic/a.b(c)*',
  // Concrete paths that a template also fits (issue #43, item 3): their own operations, else 405.
  '/api/v1/bic/bulk',
  '/api/v1/bic/bulk/',
  '/api/v1/iban/bulk',
  '/api/v1/email/bulk',
  '/api/v1/ip',
];
const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'options'];

describe('precompiled router', () => {
  it.each(PATHS.flatMap((p) => METHODS.map((m) => [m, p] as const)))('%s %s: same operation or the same 404/405', (method, path) => {
    expect(outcome(fast, method, path)).toBe(outcome(stock, method, path));
  });

  it.each(PATHS)('GET %s: the same decoded path parameters', (path) => {
    const a = req('get', path);
    const b = req('get', path);
    let expected: unknown;
    try {
      expected = stock.parseRequest(b, stock.matchOperation(b, true)).params;
    } catch {
      return; // no route: compared above
    }
    expect(fast.parseRequest(a, fast.matchOperation(a, true)).params).toEqual(expected);
  });

  it('ignores only one trailing slash, as openapi.yaml says (the stock router strips them all)', () => {
    expect(outcome(stock, 'get', '/api/v1/bic/DEUTDEFF//')).toBe('validateBic');
    expect(outcome(fast, 'get', '/api/v1/bic/DEUTDEFF//')).toBe('404');
  });

  // parseRequest runs before the key is checked: it notes what it cannot read, and the validator refuses it after the
  // key and the limits (issue #43, item 4; test/contract/precision.test.ts).
  it('notes broken percent-encoding in a path value for the validator, without throwing (the stock router throws a URIError)', () => {
    const r = req('get', '/api/v1/bic/%E0%A4%A');
    const parsed = fast.parseRequest(r, fast.matchOperation(r, true));
    expect(unreadableParameters(parsed)).toEqual([expect.objectContaining({ instancePath: '/path/bic', message: 'is not valid percent-encoding' })]);
    expect(() => stock.parseRequest(r, stock.matchOperation(r, true))).toThrow(URIError);
  });

  it('keeps only the declared query parameters and notes a repeated one for the validator', () => {
    const r = req('get', '/api/v1/dns/example.com', { type: 'MX', other: 'x' });
    const parsed = fast.parseRequest(r, fast.matchOperation(r, true));
    expect(parsed.query).toEqual({ type: 'MX' });
    expect(unreadableParameters(parsed)).toBeUndefined();
    const repeated = req('get', '/api/v1/email', { address: ['a@b.de', 'c@d.de'] });
    expect(unreadableParameters(fast.parseRequest(repeated, fast.matchOperation(repeated, true)))).toEqual([
      expect.objectContaining({ instancePath: '/query/address', message: 'must be given once' }),
    ]);
  });

  it('lists the methods of a path for Allow, HEAD beside GET', () => {
    expect(fast.allowedMethods('/api/v1/bic/DEUTDEFF')).toEqual(['GET', 'HEAD']);
    expect(fast.allowedMethods('/api/v1/password/strength')).toEqual(['POST']);
    expect(fast.allowedMethods('/nowhere')).toEqual([]);
  });

  it.each(['bic', 'iban', 'email'])('matches the concrete /api/v1/%s/bulk before the template: GET is 405, Allow: POST', (name) => {
    for (const router of [fast, stock]) {
      expect(outcome(router, 'get', `/api/v1/${name}/bulk`)).toBe('405');
      expect(outcome(router, 'options', `/api/v1/${name}/bulk`)).toBe('405');
    }
    expect(fast.allowedMethods(`/api/v1/${name}/bulk`)).toEqual(['POST']);
  });

  it('stock router alone: falls through from a concrete path to a template (why the reference adds the rule)', () => {
    expect(outcome(raw, 'get', '/api/v1/bic/bulk')).toBe('validateBic');
    expect(outcome(raw, 'post', '/api/v1/bic/bulk')).toBe('validateBics');
  });

  it('parses a request once per operation: the validator gets the same parameters without matching again', () => {
    const r = req('get', '/api/v1/ip/81.2.69.142');
    const op = fast.matchOperation(r, true);
    expect(fast.parseRequest(r, op).params).toBe(fast.parseRequest(r, op).params);
  });
});

describe('precompiled router, templates with a parameter before the last segment (no prefix lookup)', () => {
  const op = (operationId: string) => ({ operationId, responses: { '200': { description: 'ok' } } });
  const definition = {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/a/{x}': { get: op('getA') },
      '/a/{x}/b': { get: op('getAB'), post: op('postAB') },
      '/a/c/b': { put: op('putACB') },
      '/d/{y}/{z}': { get: op('getD') },
    },
  } as any;
  const small = { stock: new ConcreteFirstRouter({ definition }), fast: new PrecompiledRouter({ definition }) };
  const paths = ['/a/1', '/a/1/b', '/a/c/b', '/a/c', '/a', '/a/1/b/2', '/d/1/2', '/d/1', '/d/1/2/', '/x'];

  it.each(paths.flatMap((p) => ['get', 'post', 'put'].map((m) => [m, p] as const)))('%s %s: same operation or the same 404/405', (method, path) => {
    expect(outcome(small.fast, method, path)).toBe(outcome(small.stock, method, path));
  });
});
