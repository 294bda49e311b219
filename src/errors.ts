// The error model (openapi.yaml, Errors): ApiError, its codes and the ErrorInfo body; the failures adapters throw; the
// settings the service cannot start with. Imports nothing, importable by every layer; error-answers.ts maps them to answers.

export type ErrorCode =
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'MISSING_PARAMETER'
  | 'INVALID_FORMAT'
  | 'VALIDATION_ERROR'
  | 'RESOURCE_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'RATE_LIMIT_EXCEEDED'
  | 'QUOTA_EXCEEDED'
  | 'DAILY_QUOTA_EXCEEDED'
  | 'SMTP_QUOTA_EXCEEDED'
  | 'UPSTREAM_UNAVAILABLE'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

export interface FieldError {
  field: string;
  message: string;
}

export interface ErrorInfo {
  requestId: string | null;
  path: string;
  status: number;
  code: ErrorCode;
  message: string;
  error: string;
  details: FieldError[];
  retryAfter?: number;
}

/**
 * A failure with a client-facing meaning. Messages and details are sent as they are,
 * so they must never carry a submitted password or card number.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: FieldError[];
  readonly headers: Record<string, string>;
  readonly retryAfter?: number;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    opts: { details?: FieldError[]; headers?: Record<string, string>; retryAfter?: number } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = opts.details ?? [];
    this.headers = opts.headers ?? {};
    this.retryAfter = opts.retryAfter;
  }
}

/** RFC 9110 §15.5.6: a 405 names the methods the target does allow. */
export const methodNotAllowed = (method: string, allow: readonly string[], why = 'on this path'): ApiError =>
  new ApiError(405, 'METHOD_NOT_ALLOWED', `method ${method} is not allowed ${why}`, { headers: { Allow: allow.join(', ') } });

export const missingParameter = (name: string): ApiError =>
  new ApiError(400, 'MISSING_PARAMETER', `parameter ${name} is required`, {
    details: [{ field: name, message: 'is required' }],
  });

export const invalidFormat = (field: string, message: string): ApiError =>
  new ApiError(400, 'INVALID_FORMAT', `parameter ${field} is malformed: ${message}`, {
    details: [{ field, message }],
  });

export const notFound = (message: string): ApiError => new ApiError(404, 'RESOURCE_NOT_FOUND', message);

/** An outside dependency (DNS, range API) failed; the message must not carry resolver internals. */
export const upstreamUnavailable = (message: string): ApiError => new ApiError(502, 'UPSTREAM_UNAVAILABLE', message);

export const serviceUnavailable = (message: string, retryAfterSeconds = 1): ApiError =>
  new ApiError(503, 'SERVICE_UNAVAILABLE', message, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });

export const internalError = (): ApiError => new ApiError(500, 'INTERNAL_ERROR', 'internal server error');

// What adapters throw when the outside world says no: kinds of failure with client-safe messages, no HTTP status.

/** An expected answer from the outside world, thrown per request; never logged as a fault. */
abstract class Failure extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** An outside dependency (DNS servers, the range API) failed or answered nonsense; the message names no internals. */
export class UpstreamFailure extends Failure {
  constructor(
    readonly dependency: 'dns' | 'range',
    message: string,
  ) {
    super(message);
  }
}

/** A local resource is full or closing (the password worker pool): worth retrying after retryAfterSeconds. */
export class Overloaded extends Failure {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
  }
}

/** The name does not exist (NXDOMAIN). */
export class NoSuchDomain extends Failure {
  constructor(readonly domain: string) {
    super(`no such domain: ${domain}`);
  }
}

/** A client-given target that cannot be one (not a host name or IP literal); `reason` is safe to show. */
export class InvalidTarget extends Failure {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`parameter ${field} is malformed: ${reason}`);
  }
}

/** A well-formed target the service will not contact (it resolves to a non-public address). */
export class RefusedTarget extends Failure {
  constructor(
    readonly field: string,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** A setting the service cannot start with: names the environment variable (or file) and what is wrong with it. */
export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}
