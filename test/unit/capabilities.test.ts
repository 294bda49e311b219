// Starting the list of capabilities (src/capabilities/shared/start.ts): settings picked per capability, parts given
// and needed in list order, datasets found by name, degraded notes merged, operations without a handler found,
// listening and close order.
import { describe, expect, it } from 'vitest';
import { Dataset } from '../../src/adapters/files/dataset.js';
import { defineCapability, type Capability, type Shared } from '../../src/capabilities/capability.js';
import { startCapabilities, unhandled } from '../../src/capabilities/shared/start.js';
import type { Config } from '../../src/config.js';

const config = { port: 8080, bulkMaxItems: 7, tlsTimeoutMs: 5000 } as unknown as Config;
const record = { name: 'a-list', description: '', version: '1', date: '2026-01-01', validUntil: null, maxAgeDays: 30 };
const shared = { catalogue: { path: 'datasets.json', names: ['a-list'], record: () => record, reread: async () => ({ record: () => record }) } } as unknown as Shared;

describe('startCapabilities', () => {
  it('gives each capability the settings it declared and no other', async () => {
    const seen: object[] = [];
    const a = defineCapability({ name: 'a', config: ['bulkMaxItems'], start: ({ config }) => (seen.push(config), { handlers: {} }) });
    const b = defineCapability({ name: 'b', config: [], start: ({ config }) => (seen.push(config), { handlers: {} }) });
    await startCapabilities([a, b], config, [], shared);
    expect(seen).toEqual([{ bulkMaxItems: 7 }, {}]);
  });

  it('hands a part provided by one capability to one after it; one before it fails the start naming both', async () => {
    const giver = defineCapability({ name: 'giver', config: [], start: ({ provide }) => (provide('tlsClient', { port: 1 } as never), { handlers: {} }) });
    let got: unknown;
    const taker = defineCapability({ name: 'taker', config: [], start: ({ need }) => ((got = need('tlsClient')), { handlers: {} }) });
    await startCapabilities([giver, taker], config, [], shared);
    expect(got).toEqual({ port: 1 });
    await expect(startCapabilities([taker, giver], config, [], shared)).rejects.toThrow('capability taker needs tlsClient, which no capability before it in the list provides');
  });

  it('finds a dataset of an earlier capability by name, and gathers every dataset', async () => {
    const list = new Dataset<number>({ name: 'a-list', files: () => ['x'] }, shared.catalogue);
    const owner = defineCapability({ name: 'owner', config: [], start: () => ({ handlers: {}, datasets: [list] }) });
    let found: unknown;
    const refresher = defineCapability({ name: 'refresh', config: [], start: ({ dataset }) => ((found = dataset('a-list')), { handlers: {} }) });
    const started = await startCapabilities([owner, refresher], config, [], shared);
    expect(found).toBe(list);
    expect(started.datasets).toEqual([list]);
    await expect(startCapabilities([refresher, owner], config, [], shared)).rejects.toThrow('needs dataset a-list');
  });

  it('passes what begin started to start, and merges handlers and readiness checks', async () => {
    const c: Capability<never, string> = defineCapability({
      name: 'c',
      config: [],
      begin: () => 'early',
      start: (_ctx, begun) => ({ handlers: { getUsage: (() => begun) as never }, readiness: { c: () => begun === 'early' } }),
    });
    const started = await startCapabilities([c], config, [c.begin!({})], shared);
    expect((started.handlers.getUsage as unknown as () => string)()).toBe('early');
    expect(started.readiness.c()).toBe(true);
  });

  it('merges the degraded notes of every capability, read at each call (none when all is well)', async () => {
    let note: string | null = null;
    const proxy = defineCapability({ name: 'p', config: [], start: () => ({ handlers: {}, degraded: (): Record<string, string> => (note === null ? {} : { smtpProxy: note }) }) });
    const other = defineCapability({ name: 'o', config: [], start: () => ({ handlers: {}, degraded: () => ({ other: 'told' }) }) });
    const quiet = defineCapability({ name: 'q', config: [], start: () => ({ handlers: {} }) });
    const started = await startCapabilities([proxy, quiet, other], config, [], shared);
    expect(started.degraded()).toEqual({ other: 'told' });
    note = 'down';
    expect(started.degraded()).toEqual({ smtpProxy: 'down', other: 'told' });
  });

  it('runs listening hooks one per turn in list order, and closes in reverse order', async () => {
    const order: string[] = [];
    const make = (name: string) => defineCapability({ name, config: [], start: () => ({ handlers: {}, listening: () => order.push(`listen ${name}`), close: async () => void order.push(`close ${name}`) }) });
    const started = await startCapabilities([make('a'), make('b')], config, [], shared);
    started.listening();
    expect(order).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['listen a']);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['listen a', 'listen b']);
    await started.close();
    expect(order.slice(2)).toEqual(['close b', 'close a']);
  });
});

describe('unhandled', () => {
  const document = {
    paths: {
      '/a': { get: { operationId: 'validateIban', tags: ['Banking'] } },
      '/b': { get: { operationId: 'validateBic', tags: ['Banking'] }, post: { operationId: 'getHealth', tags: ['System'] } },
    },
  };
  it('names the operations of the contract outside System that no capability handles', () => {
    expect(unhandled(document, { validateIban: (() => null) as never })).toEqual(['validateBic']);
    expect(unhandled(document, { validateIban: (() => null) as never, validateBic: (() => null) as never })).toEqual([]);
  });
});
