// Request validation failures (Ajv errors) as ErrorInfo: MISSING_PARAMETER or INVALID_FORMAT, naming fields, never values.
import type { ErrorObject } from 'ajv';
import { ApiError, type FieldError } from './errors.js';

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
