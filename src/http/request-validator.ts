// Request validation for openapi-backend (OpenAPI 3.1 §4.8.12 parameters, §4.8.13 request bodies) with its own Ajv validators.
import type { ErrorObject } from 'ajv';
import { OpenAPIValidator, type Operation, type Request, type ValidationResult } from 'openapi-backend';
import { unreadableParameters } from './openapi-router.js';

/** What an operation's parameters need beyond the stock steps this subclass keeps. */
interface Shape {
  /** Query parameters declared `type: array`: a single value becomes a one-element array, as the stock validator does. */
  arrayQuery: ReadonlySet<string>;
  /** Query parameters with `content: application/json`: left to the stock validator (none in openapi.yaml). */
  jsonQuery: boolean;
  /** The only request media type is application/json: a body that is still a string must parse. */
  jsonOnly: boolean;
}

/**
 * openapi-backend's OpenAPIValidator with `validateRequest` doing the same steps without the lodash calls (omitBy,
 * entries, find, isEmpty) the stock method makes on every request (docs/adr/0010). The validators are the
 * library's own, compiled by its Ajv from the same schemas; the result has the same shape and the same errors. What
 * each operation declares is read once. An operation with JSON-encoded query parameters, or type coercion, takes the
 * stock path.
 */
export class RequestValidator extends OpenAPIValidator {
  private readonly shapes = new Map<string, Shape>();

  override validateRequest(req: Request, operation?: Operation | string): ValidationResult {
    const op = typeof operation === 'string' ? this.router.getOperation(operation) : (operation ?? this.router.matchOperation(req));
    if (!op?.operationId) throw new Error('Unknown operation');
    const shape = this.shapeOf(op);
    const parsed = this.router.parseRequest(req, op);
    // What the router could not read is refused here, after the key and the limits, like any other malformed value.
    const unreadable = unreadableParameters(parsed);
    if (unreadable) return { valid: false, errors: [...unreadable], coerced: req };
    if (shape.jsonQuery || this.coerceTypes) return super.validateRequest(req, op);
    const { params, query, headers, cookies, requestBody } = parsed;
    if (query) for (const name of shape.arrayQuery) if (typeof query[name] === 'string') query[name] = [query[name] as string];
    const parameters: Record<string, unknown> = {};
    if (params != null) parameters.path = params;
    if (query != null) parameters.query = query;
    if (headers != null) parameters.header = headers;
    if (cookies != null) parameters.cookie = cookies;
    const errors: ErrorObject[] = [];
    if (shape.jsonOnly && typeof req.body !== 'object' && req.body !== undefined) {
      try {
        JSON.parse(String(req.body));
      } catch (err) {
        errors.push({ keyword: 'parse', instancePath: '', schemaPath: '#/requestBody', params: [] as never, message: (err as Error).message });
      }
    }
    if (typeof requestBody === 'object' || mediaTypeOf(headers) === 'application/json') parameters.requestBody = requestBody;
    for (const validate of this.getRequestValidatorsForOperation(op.operationId) ?? []) {
      if (!validate(parameters) && validate.errors) errors.push(...validate.errors);
    }
    return errors.length ? { valid: false, errors, coerced: req } : { valid: true, errors: null, coerced: req };
  }

  private shapeOf(op: Operation): Shape {
    let shape = this.shapes.get(op.operationId!);
    if (shape === undefined) {
      const query = (op.parameters ?? []).filter((p: any) => !('$ref' in p) && p.in === 'query') as any[];
      const media = Object.keys((op.requestBody as any)?.content ?? {});
      shape = {
        arrayQuery: new Set(query.filter((p) => p.schema?.type === 'array').map((p) => p.name as string)),
        jsonQuery: query.some((p) => p.content?.['application/json']),
        jsonOnly: media.length === 1 && media[0] === 'application/json',
      };
      this.shapes.set(op.operationId!, shape);
    }
    return shape;
  }
}

/** The request's media type, lower case, without parameters ('' when none): asked only of a body that is no object. */
function mediaTypeOf(headers: Record<string, string | string[] | undefined>): string {
  const type = headers['content-type'];
  return String((Array.isArray(type) ? type[0] : type) ?? '').split(';')[0].trim().toLowerCase();
}
