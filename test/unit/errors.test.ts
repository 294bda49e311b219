// The error model (INTERFACE.md section 7): ApiError to status, code and ErrorInfo body.
import { describe, expect, it } from 'vitest';
import { ApiError, errorReply } from '../../src/http/errors.js';

describe('ApiError', () => {
  it('captures no stack: refusals stay cheap under a flood of them', () => {
    const err = new ApiError(429, 'RATE_LIMIT_EXCEEDED', 'try again later');
    expect(err.stack).toBe('ApiError: try again later');
  });

  it('leaves the stack trace limit as it found it, for every other error', () => {
    const before = Error.stackTraceLimit;
    new ApiError(404, 'RESOURCE_NOT_FOUND', 'no endpoint at /x');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('a fault').stack).toMatch(/\n\s+at /);
  });

  it('is still an Error, mapped to its status and code', () => {
    const err = new ApiError(404, 'RESOURCE_NOT_FOUND', 'no endpoint at /x');
    expect(err).toBeInstanceOf(Error);
    const reply = errorReply(err, '/x', 'req-1');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ code: 'RESOURCE_NOT_FOUND', status: 404, path: '/x', requestId: 'req-1' });
  });
});
