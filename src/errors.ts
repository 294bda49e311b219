// Error model (openapi.yaml, Errors): ApiError, its codes and the ErrorInfo body; domain-free, importable by every layer.
import { InvalidTarget, NoSuchDomain, Overloaded, RefusedTarget, UpstreamFailure } from './adapters/failures.js';
import { maskCardNumbers } from './domain/card.js';

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

/** Where in the request's life an error arose; logged, never sent. */
export type ErrorPhase = 'routing' | 'auth' | 'limits' | 'request-validation' | 'handler' | 'response-validation';

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
    // No stack: an ApiError is an answer, not a fault, and is never logged with one. Capturing it walked the
    // whole async call chain (~12 us), so every 401, 404 or 429 of a flood cost as much as a served request.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
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

/**
 * The ApiError an error answers as: itself, the mapping of an adapter's failure, or null for a fault
 * (anything else), which answers 500 INTERNAL_ERROR and is logged.
 */
export function asApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof UpstreamFailure) return upstreamUnavailable(err.message);
  if (err instanceof Overloaded) return serviceUnavailable(err.message, err.retryAfterSeconds);
  if (err instanceof NoSuchDomain) return notFound(err.message);
  if (err instanceof InvalidTarget) return invalidFormat(err.field, err.reason);
  if (err instanceof RefusedTarget) return new ApiError(400, 'VALIDATION_ERROR', err.message, { details: [{ field: err.field, message: err.reason }] });
  return null;
}

export const internalError = (): ApiError => new ApiError(500, 'INTERNAL_ERROR', 'internal server error');

/** Texts that may quote a client's input pass maskCardNumbers: a card number sent to the wrong endpoint is not echoed. */
export function errorInfo(e: ApiError, path: string, requestId: string | null): ErrorInfo {
  const message = maskCardNumbers(e.message);
  const body: ErrorInfo = {
    requestId,
    path: maskCardNumbers(path),
    status: e.status,
    code: e.code,
    message,
    error: message,
    details: e.details.map((d) => ({ ...d, message: maskCardNumbers(d.message) })),
  };
  if (e.retryAfter !== undefined) body.retryAfter = e.retryAfter;
  return body;
}
