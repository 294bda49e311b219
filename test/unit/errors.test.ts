// The error model (openapi.yaml ErrorInfo and its error-code table): ApiError and adapter failures to status, code and ErrorInfo body.
import { describe, expect, it } from 'vitest';
import { ApiError, InvalidTarget, NoSuchDomain, Overloaded, RefusedTarget, UpstreamFailure } from '../../src/errors.js';
import { asApiError, errorReply } from '../../src/error-answers.js';

describe('ApiError', () => {
  it('is still an Error, mapped to its status and code', () => {
    const err = new ApiError(404, 'RESOURCE_NOT_FOUND', 'no endpoint at /x');
    expect(err).toBeInstanceOf(Error);
    const reply = errorReply(err, '/x', 'req-1');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ code: 'RESOURCE_NOT_FOUND', status: 404, path: '/x', requestId: 'req-1' });
  });
});

describe('adapter failures: the one place they become HTTP', () => {
  it.each([
    ['UpstreamFailure', new UpstreamFailure('dns', 'DNS lookup failed'), { status: 502, code: 'UPSTREAM_UNAVAILABLE', message: 'DNS lookup failed', details: [] }, {}],
    ['Overloaded', new Overloaded('password analysis is busy, retry shortly', 2), { status: 503, code: 'SERVICE_UNAVAILABLE' }, { 'Retry-After': '2' }],
    ['NoSuchDomain', new NoSuchDomain('gone.test'), { status: 404, code: 'RESOURCE_NOT_FOUND', message: 'no such domain: gone.test' }, {}],
    ['InvalidTarget', new InvalidTarget('domain', 'not a host name'), { status: 400, code: 'INVALID_FORMAT', details: [{ field: 'domain', message: 'not a host name' }] }, {}],
    [
      'RefusedTarget',
      new RefusedTarget('domain', 'resolves to a non-public address (loopback)', 'refusing to inspect x.test: it resolves to a non-public address (loopback)'),
      { status: 400, code: 'VALIDATION_ERROR', details: [{ field: 'domain', message: 'resolves to a non-public address (loopback)' }] },
      {},
    ],
  ])('%s answers as its ApiError', (_name, failure, want, headers) => {
    expect(asApiError(failure)).toMatchObject(want);
    const reply = errorReply(failure, '/api/v1/x', 'req-2');
    expect(reply).toMatchObject({ status: want.status, body: { code: want.code, requestId: 'req-2' }, headers });
  });

  it('maps anything else to null, which answers 500 INTERNAL_ERROR without its message', () => {
    const fault = new TypeError('secret internals');
    expect(asApiError(fault)).toBeNull();
    expect(errorReply(fault, '/x', 'req-3')).toMatchObject({ status: 500, body: { code: 'INTERNAL_ERROR', message: 'internal server error' } });
  });
});
