// Request validation with openapi-backend's compiled Ajv validators; Ajv errors become ErrorInfo (never echoing values).
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend } from 'openapi-backend';
import { ApiError, type FieldError } from './errors.js';
import type { RouteOperation } from './route-table.js';

export interface OperationValidators {
  params: ValidateFunction;
  body: ValidateFunction | null;
}

export interface CompiledApi {
  operations: RouteOperation[];
  validators: Map<string, OperationValidators>;
}

/**
 * Let openapi-backend dereference the document and compile each operation's validators once.
 * quick mode: its definition check uses the OpenAPI 3.0 meta-schema and would reject 3.1 (redocly lint checks it).
 */
export async function compileApi(document: Record<string, any>): Promise<CompiledApi> {
  const api = new OpenAPIBackend({
    definition: structuredClone(document) as any,
    quick: true,
    validate: true,
    // Errors carry their schema, so a refusal can use the contract's own wording (x-invalid-message, openapi.yaml).
    ajvOpts: { verbose: true },
    customizeAjv: (ajv: any) => {
      addFormats.default(ajv as any);
      return ajv;
    },
  });
  await api.init();
  const operations: RouteOperation[] = [];
  const validators = new Map<string, OperationValidators>();
  // The System tag's routes (/healthz, /metrics, /openapi.json...) are served by system-routes.ts, never dispatched as API operations.
  for (const op of api.getOperations().filter((o) => !o.tags?.includes('System'))) {
    const operationId = op.operationId!;
    const compiled = api.validator.getRequestValidatorsForOperation(operationId) as ValidateFunction[];
    const hasBody = Boolean(op.requestBody);
    validators.set(operationId, { body: hasBody ? compiled[0] : null, params: compiled[hasBody ? 1 : 0] });
    operations.push({
      operationId,
      method: op.method.toUpperCase(),
      template: op.path,
      hasBody,
      queryParams: (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name),
    });
  }
  return { operations, validators };
}

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
