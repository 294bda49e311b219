// Response conformance to openapi.yaml, checked by our own Ajv (JSON Schema 2020-12, as OpenAPI 3.1 specifies).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ResponseCheck } from './api.js';

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export interface ContractValidator extends ResponseCheck {
  /** The ErrorInfo schema alone, for answers that belong to no operation (404 unknown path, 405). */
  checkError(body: unknown): string | null;
  operationIds(): string[];
}

export function createContractValidator(document: Record<string, any>): ContractValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv as any);
  ajv.addSchema(document, 'openapi');
  const compiled = new Map<string, ValidateFunction | null>();
  const locations = new Map<string, string>();
  for (const [path, item] of Object.entries<any>(document.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!op?.operationId) continue;
      for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
        const base = response.$ref
          ? (response.$ref as string).slice(1)
          : `/${pointer('paths', path, method, 'responses', status)}`;
        locations.set(`${op.operationId} ${status}`, `openapi#${base}/content/application~1json/schema`);
      }
    }
  }
  const errorInfo = ajv.compile({ $ref: 'openapi#/components/schemas/ErrorInfo' });
  const explain = (v: ValidateFunction) =>
    (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');

  return {
    check(operationId, status, body) {
      const id = `${operationId} ${status}`;
      if (!compiled.has(id)) {
        const ref = locations.get(id);
        compiled.set(id, ref ? ajv.compile({ $ref: ref }) : null);
      }
      const validate = compiled.get(id);
      if (!validate) return `status ${status} is not documented for ${operationId}`;
      return validate(body) ? null : explain(validate);
    },
    checkError(body) {
      return errorInfo(body) ? null : explain(errorInfo);
    },
    operationIds() {
      return [...new Set([...locations.keys()].map((k) => k.split(' ')[0]))];
    },
  };
}
