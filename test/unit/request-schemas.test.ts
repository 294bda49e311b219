// The request validators start-up compiles without checking their schemas against the JSON Schema meta-schema
// (src/http/api.ts, src/operations/bulk-items.ts: one meta-schema compile per validator cost up to 0.8 s of the boot):
// here every one of them is compiled with that check, so a schema openapi.yaml gets wrong still fails, in the tests.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { apiDocument } from '../../src/http/api.js';
import { loadSpec } from '../../src/http/spec.js';
import { bulkSpecs } from '../../src/operations/bulk-items.js';

const { document } = await loadSpec();

/** Compile every request validator as start-up does, but with Ajv's meta-schema check on (its default). */
function compileChecked(doc: Record<string, any>): number {
  const api = new OpenAPIBackend({
    definition: apiDocument(doc) as any,
    quick: true,
    ajvOpts: { verbose: true, validateSchema: true },
    customizeAjv: (ajv) => {
      addFormats.default(ajv as any);
      return ajv;
    },
  });
  void api.init();
  let compiled = 0;
  for (const op of api.getOperations()) compiled += api.validator.getRequestValidatorsForOperation(op.operationId!)?.length ?? 0;
  for (const spec of bulkSpecs(doc, 1000).values()) {
    const ajv = new Ajv({ strict: false, verbose: true, coerceTypes: true, validateSchema: true });
    addFormats.default(ajv as any);
    ajv.compile(spec.schema);
    compiled++;
  }
  return compiled;
}

describe('request validators compiled at start-up', () => {
  it('are built from schemas the meta-schema accepts', () => {
    expect(compileChecked(document)).toBeGreaterThan(20);
  });

  it('the check refuses a schema the meta-schema does not accept (a negative minLength)', () => {
    const broken = structuredClone(document);
    const param = Object.values<any>(broken.components.parameters).find((p) => p.schema?.type === 'string');
    expect(param).toBeDefined();
    param.schema.minLength = -1;
    expect(() => compileChecked(broken)).toThrow(/schema is invalid/);
  });
});
