// Dataset<T> (src/adapters/files/dataset.ts) over real files: the first load, a reload swapping the new copy in, a
// failing read keeping the old one, a swap from outside, dates from the file or from data/datasets.json's record.
// Every test writes its own folder: none depends on another's files or order.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtInDataset, Dataset } from '../../src/adapters/files/dataset.js';
import { openCatalogue, type DatasetRecord } from '../../src/adapters/files/datasets.js';
import { hostingRangesFromText } from '../../src/adapters/ip-data/ip-lists.js';
import { ConfigError } from '../../src/errors.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Ranges = ReturnType<typeof hostingRangesFromText>;

const RECORD: DatasetRecord = { name: 'hosting', description: 'test list', version: '1', date: '2026-01-10', validUntil: null, maxAgeDays: 30 };

/** A folder of its own with data/datasets.json's twin and a hosting list; the dataset over them. */
async function setUp(list: string | null, record: Partial<DatasetRecord> = {}, variable?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'vls-dataset-'));
  dirs.push(dir);
  const catalogueFile = join(dir, 'datasets.json');
  const writeRecord = (r: Partial<DatasetRecord>) => writeFileSync(catalogueFile, JSON.stringify({ datasets: [{ ...RECORD, ...r }] }));
  writeRecord(record);
  const file = join(dir, 'hosting.csv');
  if (list !== null) writeFileSync(file, list);
  const catalogue = await openCatalogue(catalogueFile);
  // The list's own date line only (the service's reader falls back to the file's modification day).
  const read = async () => {
    const text = await readFile(file, 'utf8');
    return { value: hostingRangesFromText(text, file), date: /^# date: (\S+)$/m.exec(text)?.[1] };
  };
  const dataset = new Dataset<Ranges>({ name: 'hosting', files: () => [file], read, variable }, catalogue);
  return { dataset, catalogue, file, writeRecord, write: (text: string) => writeFileSync(file, text) };
}

const provider = (d: Dataset<Ranges>, address: string) => d.value.table.labels[d.value.table.lookup(address, 4)] ?? null;
const AT = new Date('2026-02-01T00:00:00Z');

describe('Dataset', () => {
  it('loads its files at start, dated by the file when it carries a date', async () => {
    const { dataset } = await setUp('# date: 2026-01-20\ncidr,provider\n192.0.2.0/24,Example Cloud\n');
    expect(dataset.current).toBeUndefined();
    expect(() => dataset.value).toThrow(/read before it was loaded/);
    await dataset.load();
    expect(provider(dataset, '192.0.2.7')).toBe('Example Cloud');
    expect(dataset.status(AT)).toMatchObject({ name: 'hosting', date: '2026-01-20', ageDays: 12, state: 'fresh' });
  });

  it('is dated by its data/datasets.json record when its file carries no date', async () => {
    const { dataset } = await setUp('cidr,provider\n192.0.2.0/24,Example Cloud\n', { date: '2025-12-01' });
    await dataset.load();
    expect(dataset.status(AT)).toMatchObject({ date: '2025-12-01', ageDays: 62, state: 'aged' });
  });

  it('a reload swaps the new copy in and tells its listeners', async () => {
    const { dataset, write } = await setUp('# date: 2026-01-20\ncidr,provider\n192.0.2.0/24,Example Cloud\n');
    await dataset.load();
    const before = dataset.value;
    const seen: Ranges[] = [];
    dataset.onSwap((v) => seen.push(v));
    write('# date: 2026-01-30\ncidr,provider\n198.51.100.0/24,Other Cloud\n');
    await dataset.reload();
    expect(dataset.value).not.toBe(before);
    expect(seen).toEqual([dataset.value]);
    expect(provider(dataset, '198.51.100.1')).toBe('Other Cloud');
    expect(provider(dataset, '192.0.2.7')).toBeNull();
    expect(dataset.status(AT).date).toBe('2026-01-30');
  });

  it.each([
    ['a corrupt file', (s: Awaited<ReturnType<typeof setUp>>) => s.write('cidr,provider\n<html>not a list</html>\n'), /data line 2 is not "cidr,provider"/],
    ['a file that has gone', (s: Awaited<ReturnType<typeof setUp>>) => rmSync(s.file), /ENOENT/],
    ['its record gone from data/datasets.json', (s: Awaited<ReturnType<typeof setUp>>) => s.writeRecord({ name: 'other' }), /has no record of dataset "hosting"/],
  ])('a reload that fails on %s keeps the value, date and record in use', async (_, breakIt, error) => {
    const set = await setUp('# date: 2026-01-20\ncidr,provider\n192.0.2.0/24,Example Cloud\n');
    await set.dataset.load();
    const before = set.dataset.value;
    let swaps = 0;
    set.dataset.onSwap(() => swaps++);
    breakIt(set);
    await expect(set.dataset.reload()).rejects.toThrow(error);
    expect(set.dataset.value).toBe(before);
    expect(swaps).toBe(0);
    expect(set.dataset.status(AT)).toMatchObject({ name: 'hosting', date: '2026-01-20', maxAgeDays: 30 });
  });

  it('counts reloads and failed reloads, not the first load', async () => {
    const { dataset, write, file } = await setUp('cidr,provider\n192.0.2.0/24,Example Cloud\n');
    await dataset.load();
    expect(dataset.counts()).toEqual({ reloads: 0, failures: 0 });
    await dataset.reload();
    write('not a list\n');
    await expect(dataset.reload()).rejects.toThrow(file);
    expect(dataset.counts()).toEqual({ reloads: 1, failures: 1 });
  });

  it('a reload reads its record again: a new validity or maximum age applies', async () => {
    const { dataset, writeRecord } = await setUp('cidr,provider\n192.0.2.0/24,Example Cloud\n');
    await dataset.load();
    expect(dataset.status(AT).state).toBe('fresh');
    writeRecord({ validUntil: '2026-01-15' });
    await dataset.reload();
    expect(dataset.status(AT)).toMatchObject({ validUntil: '2026-01-15', state: 'expired' });
  });

  it('a file that cannot be read at start is a ConfigError naming its setting and the file', async () => {
    const { dataset, file } = await setUp(null, {}, 'HOSTING_RANGES_FILE');
    const err = await dataset.load().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(`HOSTING_RANGES_FILE: ${file}: no such file or directory`);
  });

  it('content it cannot read at start is a ConfigError naming the setting; without a setting the error is unchanged', async () => {
    const named = await setUp('cidr,provider\nnot a range,x\n', {}, 'HOSTING_RANGES_FILE');
    await expect(named.dataset.load()).rejects.toThrow(/^HOSTING_RANGES_FILE: .*data line 2 is not "cidr,provider"/);
    const unnamed = await setUp('cidr,provider\nnot a range,x\n');
    const err = await unnamed.dataset.load().catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/data line 2 is not "cidr,provider"/);
  });

  it('replace() swaps a value made elsewhere (a download) through the same listeners', async () => {
    const { dataset, file } = await setUp('# date: 2026-01-20\ncidr,provider\n192.0.2.0/24,Example Cloud\n');
    await dataset.load();
    let swaps = 0;
    dataset.onSwap(() => swaps++);
    writeFileSync(file, 'cidr,provider\n203.0.113.0/24,Downloaded Cloud\n');
    dataset.replace(hostingRangesFromText(await readFile(file, 'utf8')), '2026-01-31');
    expect(provider(dataset, '203.0.113.9')).toBe('Downloaded Cloud');
    expect(dataset.status(AT).date).toBe('2026-01-31');
    expect(swaps).toBe(1);
  });

  it('data built into the code is dated by its record and not reloadable', async () => {
    const { dataset, catalogue } = await setUp('cidr,provider\n192.0.2.0/24,Example Cloud\n');
    const builtIn = builtInDataset('hosting', catalogue, 'some-package');
    expect(builtIn.reloadable).toBe(false);
    expect(dataset.reloadable).toBe(true);
    expect(builtIn.status(AT).date).toBe('2026-01-10');
    await expect(builtIn.reload()).rejects.toThrow(/built into the code/);
  });
});
