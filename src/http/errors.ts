// The HTTP side of the error model (RFC 9110 §15): an error becomes a status, the ErrorInfo body and header fields.
import { internalError, type ErrorInfo } from '../errors.js';
import { asApiError, errorInfo } from '../operations/error-answer.js';

export * from '../errors.js';
export { asApiError } from '../operations/error-answer.js';

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
