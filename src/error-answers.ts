// What a failure answers (openapi.yaml, Errors; RFC 9110 §15): an adapter's failure or a refused request as its
// ApiError, the ErrorInfo body with card numbers masked, and its status and header fields. The one mapping, shared by
// the bulk items (each answers what the single operation would) and the HTTP layer; the model itself is errors.ts.
import type { ErrorObject } from 'ajv';
import { maskCardNumbers } from './domain/card.js';
import {
  ApiError,
  internalError,
  invalidFormat,
  InvalidTarget,
  NoSuchDomain,
  notFound,
  Overloaded,
  RefusedTarget,
  serviceUnavailable,
  UpstreamFailure,
  upstreamUnavailable,
  type ErrorInfo,
  type FieldError,
} from './errors.js';

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

/**
 * The answer to a failure: its status, the ErrorInfo body and its header fields (the ApiError's own, and Retry-After
 * when it says when to retry). The missing-key 401 arises before a correlation id is handed out (openapi.yaml, Authentication).
 */
export function errorReply(err: unknown, path: string, requestId: string): { status: number; body: ErrorInfo; headers: Record<string, string> } {
  const e = asApiError(err) ?? internalError();
  const body = errorInfo(e, path, e.status === 401 ? null : requestId);
  const headers: Record<string, string> = { ...e.headers };
  if (e.retryAfter !== undefined) headers['Retry-After'] = String(e.retryAfter);
  return { status: e.status, body, headers };
}

// Request validation failures (Ajv errors): MISSING_PARAMETER or INVALID_FORMAT, naming fields, never values.

const FIELD = /^\/(?:path|query|header|requestBody)\/?([^/]*)/;

function fieldOf(e: ErrorObject): string {
  if (e.keyword === 'required') return String((e.params as { missingProperty: string }).missingProperty);
  const m = FIELD.exec(e.instancePath);
  return m?.[1] || 'body';
}

/** Keywords whose refusal reads better in the contract's own words than in Ajv's (a regular expression, "anyOf"). */
const WORDED = new Set(['pattern', 'anyOf', 'format', 'minLength', 'maxLength']);

/** The contract's wording for a value its schema refuses (`x-invalid-message` in openapi.yaml), else Ajv's. */
function messageOf(e: ErrorObject): string {
  const own = (e.parentSchema as Record<string, unknown> | undefined)?.['x-invalid-message'];
  return typeof own === 'string' && WORDED.has(e.keyword) ? own : (e.message ?? 'is invalid');
}

/** Map Ajv errors to MISSING_PARAMETER (absent) or INVALID_FORMAT (malformed), naming fields, never values. */
export function validationError(errors: ErrorObject[]): ApiError {
  const missing = errors.find((e) => e.keyword === 'required');
  if (missing) {
    const name = fieldOf(missing);
    // A missing request body or path/query group is reported as the body.
    const field = name === 'requestBody' ? 'body' : name;
    return new ApiError(400, 'MISSING_PARAMETER', `parameter ${field} is required`, {
      details: [{ field, message: 'is required' }],
    });
  }
  const details: FieldError[] = [];
  // The alternatives of an anyOf that failed as a whole: its own message says what was expected.
  const anyOf = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/`);
  for (const e of errors) {
    if (anyOf.some((prefix) => e.schemaPath.startsWith(prefix))) continue;
    const field = fieldOf(e);
    const message = messageOf(e);
    if (!details.some((d) => d.field === field && d.message === message)) details.push({ field, message });
  }
  const first = details[0] ?? { field: 'request', message: 'is invalid' };
  return new ApiError(400, 'INVALID_FORMAT', `parameter ${first.field} is malformed: ${first.message}`, { details });
}
