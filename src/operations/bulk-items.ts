// Bulk requests (openapi.yaml, `x-counted: items` and `x-bulk-of`): each item is the single operation's one input.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError } from '../errors.js';
import { validationError } from '../error-answers.js';

/** A bulk operation and the single operation whose one parameter each of its items is. */
export interface BulkSpec {
  operationId: string;
  single: string;
  /** The single operation's one required parameter (`iban`, `bic`, `address`) and where it travels. */
  field: string;
  location: 'path' | 'query';
  schema: Record<string, unknown>;
  /** Body limit: per allowed item the longest valid input at 4 UTF-8 bytes a character, its quotes and comma, plus 1 KiB. */
  bodyLimit: number;
}

const resolve = (document: Record<string, any>, node: any): any =>
  typeof node?.$ref === 'string' ? node.$ref.slice(2).split('/').reduce((o: any, k: string) => o?.[k], document) : node;

/** The bulk operations of the document, by operationId. */
export function bulkSpecs(document: Record<string, any>, maxItems: number): Map<string, BulkSpec> {
  const ops = new Map<string, any>();
  for (const item of Object.values<any>(document.paths ?? {})) for (const op of Object.values<any>(item)) if (op?.operationId) ops.set(op.operationId, op);
  const out = new Map<string, BulkSpec>();
  for (const [operationId, op] of ops) {
    const single = op['x-bulk-of'];
    if (typeof single !== 'string') continue;
    // The item is the single operation's one required parameter; its optional ones are options of the whole body.
    const params = (ops.get(single)?.parameters ?? []).map((p: unknown) => resolve(document, p)).filter((p: any) => p.required === true);
    if (params.length !== 1 || (params[0].in !== 'path' && params[0].in !== 'query')) throw new Error(`${operationId}: x-bulk-of needs one required path or query parameter`);
    const schema = params[0].schema as Record<string, unknown>;
    const maxLength = Number(schema.maxLength);
    if (!Number.isSafeInteger(maxLength)) throw new Error(`${operationId}: the items' schema needs a maxLength`);
    out.set(operationId, { operationId, single, field: params[0].name, location: params[0].in, schema, bodyLimit: maxItems * (4 * maxLength + 3) + 1024 });
  }
  return out;
}

/** How many requests a bulk body counts: its item count when it holds 1..maxItems items, else 1 (it is refused). */
export function unitsOf(body: unknown, maxItems: number): number {
  const items = (body as { items?: unknown } | null)?.items;
  return Array.isArray(items) && items.length >= 1 && items.length <= maxItems ? items.length : 1;
}

/** 400 for a bulk body over BULK_MAX_ITEMS, naming the limit; null when within it. */
export function overItemLimit(body: unknown, maxItems: number): ApiError | null {
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items) || items.length <= maxItems) return null;
  const message = `must hold at most ${maxItems} items (BULK_MAX_ITEMS), not ${items.length}`;
  return new ApiError(400, 'INVALID_FORMAT', `parameter items is malformed: ${message}`, { details: [{ field: 'items', message }] });
}

/**
 * Checks one item as the single operation's request validation would (same Ajv options as openapi-backend's
 * parameter validator, same mapping to ErrorInfo): the ApiError its 400 would carry, or null.
 */
export function itemChecker(spec: BulkSpec): (item: string) => ApiError | null {
  // validateSchema: false as in http/api.ts (the same schemas, checked against the meta-schema by a test).
  const ajv = new Ajv({ strict: false, verbose: true, coerceTypes: true, validateSchema: false });
  addFormats.default(ajv as any);
  const validate = ajv.compile({
    type: 'object',
    required: [spec.location],
    properties: { [spec.location]: { type: 'object', required: [spec.field], properties: { [spec.field]: spec.schema } } },
  });
  return (item) => (validate({ [spec.location]: { [spec.field]: item } }) ? null : validationError(validate.errors ?? []));
}
