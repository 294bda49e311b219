// Dataset registry (dates as ISO 8601 calendar dates): states by date, the shipped records, and how the running
// service reports them (/readyz, /metrics, one warning line at start per aged or expired dataset).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dataset } from '../../src/adapters/files/dataset.js';
import {
  datasetStatus,
  loadDatasets,
  staleDatasets,
  warnStaleDatasets,
  type DatasetRecord,
} from '../../src/adapters/files/datasets.js';
import { projectPath } from '../../src/http/spec.js';
import { startHarness, type Harness } from '../support/harness.js';

const record = (over: Partial<DatasetRecord> = {}): DatasetRecord => ({
  name: 'x',
  description: 'x',
  version: '1',
  date: '2026-06-08',
  validUntil: '2026-12-06',
  maxAgeDays: 190,
  ...over,
});

describe('datasetStatus', () => {
  it.each([
    ['the day it was produced', '2026-06-08T00:00:00Z', 'fresh', 0],
    ['within its maximum age', '2026-11-25T12:00:00Z', 'fresh', 170],
    ['on the last valid day', '2026-12-06T23:59:59Z', 'fresh', 181],
    ['the day after validUntil', '2026-12-07T00:00:00Z', 'expired', 182],
  ])('%s: %s is %s', (_label, now, state, ageDays) => {
    expect(datasetStatus(record(), new Date(now))).toMatchObject({ state, ageDays });
  });

  it('is aged past its maximum age when it names no validity', () => {
    const r = record({ validUntil: null, maxAgeDays: 90 });
    expect(datasetStatus(r, new Date('2026-09-06T00:00:00Z')).state).toBe('fresh');
    expect(datasetStatus(r, new Date('2026-09-07T00:00:00Z')).state).toBe('aged');
  });

  it('expired wins over aged', () => {
    expect(datasetStatus(record({ maxAgeDays: 1 }), new Date('2027-01-01T00:00:00Z')).state).toBe('expired');
  });

  it('a dataset dated by its own file wins over its record; a malformed date falls back to the record', () => {
    const geo = record({ name: 'geo', validUntil: null, maxAgeDays: 60 });
    const catalogue = { path: 'datasets.json', names: ['geo'], record: () => geo, reread: async () => ({ record: () => geo }) };
    const dataset = new Dataset<number>({ name: 'geo', files: () => [] }, catalogue);
    const now = new Date('2026-11-25T00:00:00Z');
    expect(dataset.status(now).state).toBe('aged');
    dataset.replace(1, '2026-11-01');
    expect(dataset.status(now)).toMatchObject({ date: '2026-11-01', state: 'fresh' });
    dataset.replace(2, 'yesterday');
    expect(dataset.status(now).date).toBe('2026-06-08');
  });
});

describe('warnStaleDatasets', () => {
  it('logs one line per aged or expired dataset, none for fresh ones', () => {
    const lines: [object, string][] = [];
    const logger = { warn: (fields: object, msg: string) => void lines.push([fields, msg]) };
    const now = new Date('2026-12-07T00:00:00Z');
    const statuses = [record({ name: 'de' }), record({ name: 'new', date: '2026-12-01', validUntil: null })].map((r) => datasetStatus(r, now));
    expect(warnStaleDatasets(logger, statuses)).toBe(1);
    expect(lines).toEqual([[{ dataset: 'de', date: '2026-06-08', validUntil: '2026-12-06', maxAgeDays: 190 }, 'dataset de is expired: run make data']]);
  });
});

describe('data/datasets.json', () => {
  let records: DatasetRecord[];
  beforeAll(async () => {
    records = await loadDatasets(projectPath('data/datasets.json'));
  });

  it('dates every shipped dataset: bank tables, BIN ranges, email lists, GeoLite2, hosting ranges, hosting ASNs and Tor lists', () => {
    expect(records.map((r) => r.name).sort()).toEqual([
      'bank-codes-de',
      'bank-codes-iban-to-bic',
      'bank-codes-national',
      'bin-ranges',
      'email-disposable',
      'email-free',
      'email-role',
      'geolite2',
      'ip-hosting',
      'ip-hosting-asns',
      'ip-tor-exits',
    ]);
  });

  it('carries the Bundesbank data validity of the bankdata-germany version installed', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(projectPath('node_modules/bankdata-germany/package.json'), 'utf8')) as { version: string };
    const de = records.find((r) => r.name === 'bank-codes-de')!;
    expect(de.version).toBe(pkg.version);
    expect(de.validUntil).toBe('2026-12-06');
  });

  it('the 2017 BIN ranges are aged, the German bank codes expire after 2026-12-06', () => {
    const at = (d: string) => new Map(staleDatasets(records.map((r) => datasetStatus(r, new Date(d)))).map((s) => [s.name, s.state]));
    expect(at('2026-11-25T00:00:00Z').get('bin-ranges')).toBe('aged');
    expect(at('2026-11-25T00:00:00Z').get('bank-codes-de')).toBeUndefined();
    expect(at('2026-12-07T00:00:00Z').get('bank-codes-de')).toBe('expired');
  });

  it('rejects a record without a date', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(await mkdtemp(join(tmpdir(), 'datasets-')), 'datasets.json');
    await writeFile(file, JSON.stringify({ datasets: [{ name: 'x', date: '', validUntil: null, maxAgeDays: 1 }] }));
    await expect(loadDatasets(file)).rejects.toThrow(/dataset "x"/);
  });
});

describe('the running service', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('/readyz stays ready and reports each dataset with its date and state', async () => {
    const res = await h.fetch('/readyz');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; datasets: { name: string; date: string; state: string }[] };
    expect(body.status).toBe('ready');
    expect(body.datasets.map((d) => d.name)).toContain('bank-codes-de');
    for (const d of body.datasets) {
      expect(d.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(['fresh', 'aged', 'expired']).toContain(d.state);
    }
    expect(body.datasets.find((d) => d.name === 'bin-ranges')?.state).toBe('aged');
  });

  it('/metrics has a dataset_state gauge per dataset', async () => {
    const text = await (await h.fetch('/metrics')).text();
    expect(text).toMatch(/^dataset_state\{dataset="bin-ranges"\} 1$/m);
    expect(text).toMatch(/^dataset_state\{dataset="bank-codes-de"\} [012]$/m);
    expect(text).toMatch(/^dataset_age_days\{dataset="bin-ranges"\} \d+$/m);
  });

  it('logs one warning at start per aged or expired dataset', () => {
    const warnings = h.logs.map((l) => JSON.parse(l) as { level: number; dataset?: string; msg: string }).filter((l) => l.dataset);
    const stale = staleDatasets(h.composition.deps.datasets!() as never).length;
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(stale + 1); // geolite2 may turn aged only once its databases open
    expect(new Set(warnings.map((w) => w.dataset)).size).toBe(warnings.length);
    expect(warnings.find((w) => w.dataset === 'bin-ranges')).toMatchObject({ level: 40, msg: 'dataset bin-ranges is aged: run make data' });
  });

  it('resolves IBANs through the data/banks tables loaded at start', async () => {
    const res = await h.call('/api/v1/iban/IT60X0542811101000000123456');
    expect(res.body).toMatchObject({ valid: true, bic: 'BLOPIT22XXX', bicValid: true });
  });
});
