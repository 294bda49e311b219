// docs/architecture.md's recipe, checked: a capability defined in its own module (here, this file) and added to
// compose()'s list with one line appears in /readyz and serves its operation, with nothing else changed: no edit
// of compose(), the app, the router or /readyz. (Its path in openapi.yaml, step 1 of the recipe, is this file's
// copy of the contract with one path more.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCapability } from '../../src/capabilities/capability.js';
import { CAPABILITIES } from '../../src/compose.js';
import { loadSpec, type Spec } from '../../src/http/spec.js';
import { keyOf } from '../../src/operations/types.js';
import { startHarness, type Harness } from '../support/harness.js';

/** The recipe's step 2: one module, its settings (an existing one: BULK_MAX_ITEMS), its handler and readiness. */
let ready = true;
const widget = defineCapability({
  name: 'widget',
  config: ['bulkMaxItems'],
  start: ({ config }) => ({
    handlers: {
      getWidget: (context: { request: { params: { id: string } }; security?: { ApiKey?: unknown } }) => ({
        status: 200,
        body: { id: context.request.params.id, keyId: keyOf(context).id, bulkMaxItems: config.bulkMaxItems },
      }),
    } as never,
    readiness: { widget: () => ready },
  }),
});

/** openapi.yaml with the widget's path (step 1), as its author would write it. */
async function contractWithWidget(): Promise<Spec> {
  const { document } = await loadSpec();
  const copy = structuredClone(document);
  const errors = Object.fromEntries(['400', '401', '403', '405', '429', '500', '503'].map((s) => [s, structuredClone(copy.paths['/api/v1/bic/{bic}'].get.responses[s])]));
  copy.paths['/api/v1/widgets/{id}'] = {
    get: {
      operationId: 'getWidget',
      tags: ['Banking'],
      summary: 'A widget',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z]{1,8}$' } }],
      responses: {
        '200': {
          description: 'The widget',
          content: { 'application/json': { schema: { type: 'object', additionalProperties: false, required: ['id', 'keyId', 'bulkMaxItems'], properties: { id: { type: 'string' }, keyId: { type: 'string' }, bulkMaxItems: { type: 'integer' } } } } },
        },
        ...errors,
      },
    },
  };
  const json = JSON.stringify(copy);
  return { document: copy, yaml: json, json };
}

let h: Harness;
beforeAll(async () => {
  // The recipe's step 3: one line, the list with the widget added.
  h = await startHarness({ BULK_MAX_ITEMS: '7' }, { spec: await contractWithWidget(), capabilities: [...CAPABILITIES, widget] });
});
afterAll(() => h.close());

describe('a capability added with one line of the list', () => {
  it("serves its operation with its own settings, behind the API's key check", async () => {
    const res = await h.call('/api/v1/widgets/blue');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 'blue', keyId: expect.any(String), bulkMaxItems: 7 });
    expect((await h.call('/api/v1/widgets/blue', { key: null })).status).toBe(401);
    expect((await h.call('/api/v1/widgets/NOT-VALID')).status).toBe(400);
  });

  it('appears in /readyz and /metrics, which follow its readiness check', async () => {
    expect((await h.call('/readyz')).body).toMatchObject({ status: 'ready', checks: { widget: true } });
    expect(await (await h.fetch('/metrics')).text()).toMatch(/^readiness_check\{check="widget"\} 1$/m);
    ready = false;
    try {
      const res = await h.call('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 'not ready', checks: { widget: false } });
    } finally {
      ready = true;
    }
  });

  it('without its line the same contract does not start: compose() names the operation no capability handles', async () => {
    await expect(startHarness({}, { spec: await contractWithWidget() })).rejects.toThrow('no capability handles getWidget (openapi.yaml)');
  });
});
