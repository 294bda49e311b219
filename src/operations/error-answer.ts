// What an error answers (openapi.yaml, Errors): an adapter's failure as its ApiError, and the ErrorInfo body with card
// numbers masked. The one mapping, shared by the bulk items (each answers what the single operation would) and http/.
import { InvalidTarget, NoSuchDomain, Overloaded, RefusedTarget, UpstreamFailure } from '../adapters/failures.js';
import { maskCardNumbers } from '../domain/card.js';
import { ApiError, invalidFormat, notFound, serviceUnavailable, upstreamUnavailable, type ErrorInfo } from '../errors.js';

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
