// The request validator subclass against openapi-backend's stock OpenAPIValidator over openapi.yaml: same verdict, same errors.
import { OpenAPIBackend, OpenAPIValidator, type Request } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import { VALIDATION_OPTIONS, apiDocument } from '../../src/http/api.js';
import { PrecompiledRouter } from '../../src/http/openapi-router.js';
import { RequestValidator } from '../../src/http/request-validator.js';
import { loadSpec } from '../../src/http/spec.js';
import { validationError } from '../../src/error-answers.js';

let stock: OpenAPIValidator;
let fast: RequestValidator;
let router: PrecompiledRouter;

beforeAll(async () => {
  const api = new OpenAPIBackend({ definition: apiDocument((await loadSpec()).document) as any, quick: true, validate: false });
  await api.init();
  router = new PrecompiledRouter({ definition: api.definition });
  const opts = { definition: api.definition, router, lazyCompileValidators: true, ...VALIDATION_OPTIONS };
  stock = new OpenAPIValidator(opts);
  fast = new RequestValidator(opts);
});

const JSON_TYPE = { 'content-type': 'application/json' };

interface Case {
  name: string;
  method: string;
  path: string;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  body?: unknown;
  valid: boolean;
}

const CASES: Case[] = [
  { name: 'a valid BIC path value', method: 'get', path: '/api/v1/bic/DEUTDEFFXXX', valid: true },
  { name: 'a BIC path value over its length', method: 'get', path: `/api/v1/bic/${'A'.repeat(65)}`, valid: false },
  { name: 'an IBAN path value', method: 'get', path: '/api/v1/iban/DE89370400440532013000', valid: true },
  { name: 'an IP address', method: 'get', path: '/api/v1/ip/81.2.69.142', valid: true },
  { name: 'not an IP address', method: 'get', path: '/api/v1/ip/not-an-ip', valid: false },
  { name: 'a DNS query with a type list', method: 'get', path: '/api/v1/dns/example.com', query: { type: 'A,MX' }, valid: true },
  { name: 'a DNS query with an empty type', method: 'get', path: '/api/v1/dns/example.com', query: { type: '' }, valid: false },
  { name: 'an email address', method: 'get', path: '/api/v1/email', query: { address: 'jane@example.com' }, valid: true },
  { name: 'an email query without its address', method: 'get', path: '/api/v1/email', valid: false },
  { name: 'a card body', method: 'post', path: '/api/v1/creditcard/validate', headers: JSON_TYPE, body: { cardNumber: '4111111111111111' }, valid: true },
  { name: 'a card body without its number', method: 'post', path: '/api/v1/creditcard/validate', headers: JSON_TYPE, body: {}, valid: false },
  { name: 'a card body with a number as a number', method: 'post', path: '/api/v1/creditcard/validate', headers: JSON_TYPE, body: { cardNumber: 4111111111111111 }, valid: false },
  { name: 'a card body with a field the schema does not name', method: 'post', path: '/api/v1/creditcard/validate', headers: JSON_TYPE, body: { cardNumber: '4111111111111111', cvv: '123' }, valid: true },
  { name: 'a body that is still text and not JSON', method: 'post', path: '/api/v1/creditcard/validate', headers: JSON_TYPE, body: '{"cardNumber":', valid: false },
  { name: 'a password body', method: 'post', path: '/api/v1/password/strength', headers: JSON_TYPE, body: { password: 'Tr0ub4dor&3' }, valid: true },
  { name: 'an empty password', method: 'post', path: '/api/v1/password/strength', headers: JSON_TYPE, body: { password: '' }, valid: false },
  { name: 'a body without a content type', method: 'post', path: '/api/v1/password/strength', body: { password: 'x' }, valid: true },
  { name: 'no body without a content type', method: 'post', path: '/api/v1/password/strength', valid: false },
  { name: 'an IBAN bulk body', method: 'post', path: '/api/v1/iban/bulk', headers: JSON_TYPE, body: { items: ['DE89370400440532013000'] }, valid: true },
  { name: 'an IBAN bulk body with a number item', method: 'post', path: '/api/v1/iban/bulk', headers: JSON_TYPE, body: { items: [1] }, valid: false },
];

function request(c: Case): Request {
  return { method: c.method, path: c.path, query: c.query ?? {}, headers: { ...c.headers }, body: c.body };
}

const strip = (errors: unknown) => JSON.parse(JSON.stringify(errors ?? null));

describe('request validator', () => {
  it.each(CASES)('$name: same verdict and errors as the stock validator', (c) => {
    const operation = router.matchOperation(request(c), true);
    const want = stock.validateRequest(request(c), operation);
    const got = fast.validateRequest(request(c), operation);
    expect(got.valid).toBe(c.valid);
    expect(got.valid).toBe(want.valid);
    expect(strip(got.errors)).toEqual(strip(want.errors));
  });

  it.each([
    ['a repeated query parameter', '/api/v1/dns/example.com', { type: ['A', 'MX'] }, 'parameter type is malformed: must be given once'],
    ['broken percent-encoding in a path value', '/api/v1/bic/%E0%A4%A', {}, 'parameter bic is malformed: is not valid percent-encoding'],
  ])('refuses %s the router could not read, as INVALID_FORMAT naming the field (issue #43, item 4)', (_, path, query, message) => {
    const r: Request = { method: 'get', path, query, headers: {} };
    const result = fast.validateRequest(r, router.matchOperation(r, true));
    expect(result.valid).toBe(false);
    expect(validationError(result.errors!)).toMatchObject({ status: 400, code: 'INVALID_FORMAT', message });
  });

  it('accepts an operationId in place of the operation, as the stock validator does', () => {
    const c = CASES[0]!;
    router.matchOperation(request(c), true);
    expect(fast.validateRequest(request(c), 'validateBic').valid).toBe(true);
  });
});
