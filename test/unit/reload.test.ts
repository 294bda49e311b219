// Reloading the file datasets (SIGHUP's work, src/adapters/files/reload.ts) in process: new data swapped in, a bad
// file keeping the old, dates and counters. The signal itself, under load and with WORKERS: test/faults/sighup-reload.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { Dataset } from '../../src/adapters/files/dataset.js';
import { openCatalogue, type DatasetRecord } from '../../src/adapters/files/datasets.js';
import { createReloader } from '../../src/adapters/files/reload.js';
import { projectPath } from '../../src/http/spec.js';
import { startHarness, type Harness } from '../support/harness.js';

let dir: string;
let hostingFile: string;
let torFile: string;
let asnFile: string;
let h: Harness;

const RECORD = (name: string): DatasetRecord => ({ name, description: 'test', version: '1', date: '2026-01-10', validUntil: null, maxAgeDays: 30 });
const HOSTING = '# date: 2026-01-05\ncidr,provider\n3.5.140.0/22,Amazon Web Services\n';
const TOR = '# date: 2026-01-05\n185.220.101.1\n';
const ASNS = '# date: 2026-01-05\nAS64500 # EXAMPLE-DC\n';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vls-reload-'));
  hostingFile = join(dir, 'hosting.csv');
  torFile = join(dir, 'tor.txt');
  writeFileSync(hostingFile, HOSTING);
  writeFileSync(torFile, TOR);
  asnFile = join(dir, 'asns.txt');
  writeFileSync(asnFile, ASNS);
  h = await startHarness({ HOSTING_RANGES_FILE: hostingFile, TOR_EXIT_FILE: torFile, HOSTING_ASN_FILE: asnFile });
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

const dataset = async (name: string) => ((await h.call('/readyz')).body.datasets as { name: string; date: string }[]).find((d) => d.name === name);
const metric = async (name: string, dataset: string) => {
  const text = await (await h.fetch('/metrics')).text();
  return Number(new RegExp(`^${name}\\{dataset="${dataset}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
};

describe('reloading the file datasets', () => {
  // Each test starts from the same lists, loaded: none depends on what another left behind, nor on their order.
  beforeEach(async () => {
    writeFileSync(hostingFile, HOSTING);
    writeFileSync(torFile, TOR);
    writeFileSync(asnFile, ASNS);
    expect((await h.composition.reloader.reloadAll()).failed).toEqual([]);
  });

  it('swaps in a new hosting ASN list: an address of a newly listed network is hosting, named by its AS organisation', async () => {
    // MaxMind's test ASN database: 89.160.20.112 is AS29518, Bredband2 AB.
    expect((await h.call('/api/v1/ip/89.160.20.112')).body.security).toMatchObject({ isHosting: false, hostingProvider: null });
    writeFileSync(asnFile, `${ASNS.replace('2026-01-05', '2026-02-03')}AS29518 # listed for this test\n`);
    expect((await h.composition.reloader.reloadAll()).failed).toEqual([]);
    expect((await h.call('/api/v1/ip/89.160.20.112')).body.security).toMatchObject({ isHosting: true, hostingProvider: 'Bredband2 AB' });
    expect(await dataset('ip-hosting-asns')).toMatchObject({ date: '2026-02-03' });
  });

  it('swaps in the new lists: the answers, /readyz dates and the reload counters follow', async () => {
    expect((await h.call('/api/v1/ip/81.2.69.142')).body.security).toEqual({ isHosting: false, hostingProvider: null, isTor: false });
    expect(await dataset('ip-tor-exits')).toMatchObject({ date: '2026-01-05' });
    const [reloads, failures] = [await metric('dataset_reloads_total', 'ip-tor-exits'), await metric('dataset_reload_failures_total', 'ip-tor-exits')];

    writeFileSync(hostingFile, `${HOSTING.replace('2026-01-05', '2026-02-01')}81.2.69.0/24,Example Cloud\n`);
    writeFileSync(torFile, `${TOR.replace('2026-01-05', '2026-02-02')}81.2.69.142\n`);
    const outcome = await h.composition.reloader.reloadAll();

    expect(outcome.failed).toEqual([]);
    // The names /readyz shows, but for the tables built into npm packages (read with the code, not reloadable).
    const shown = ((await h.call('/readyz')).body.datasets as { name: string }[]).map((d) => d.name);
    expect(outcome.reloaded).toEqual(shown.filter((n) => n !== 'bank-codes-de' && n !== 'bank-codes-iban-to-bic'));
    // ...and the names of the reload counters in /metrics.
    const series = [...(await (await h.fetch('/metrics')).text()).matchAll(/^dataset_reloads_total\{dataset="([^"]+)"\}/gm)].map((m) => m[1]);
    expect(series).toEqual(outcome.reloaded);
    expect((await h.call('/api/v1/ip/81.2.69.142')).body.security).toEqual({ isHosting: true, hostingProvider: 'Example Cloud', isTor: true });
    expect(await dataset('ip-hosting')).toMatchObject({ date: '2026-02-01' });
    expect(await dataset('ip-tor-exits')).toMatchObject({ date: '2026-02-02' });
    expect(await metric('dataset_reloads_total', 'ip-tor-exits')).toBe(reloads + 1);
    expect(await metric('dataset_reload_failures_total', 'ip-tor-exits')).toBe(failures);
    // The other datasets answer as before (reloaded from the same files).
    expect((await h.call('/api/v1/iban/DE89370400440532013000')).body).toMatchObject({ valid: true, bankName: 'Commerzbank' });
    const card = await h.call('/api/v1/creditcard/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cardNumber: '4111111111111111' }) });
    expect(card.status).toBe(200);
  });

  it('keeps the data in use when a file is corrupt, logging one line that names the file', async () => {
    writeFileSync(hostingFile, `${HOSTING.replace('2026-01-05', '2026-02-01')}81.2.69.0/24,Example Cloud\n`);
    expect((await h.composition.reloader.reloadAll()).failed).toEqual([]);
    const before = h.logs.length;
    const failuresBefore = await metric('dataset_reload_failures_total', 'ip-hosting');
    writeFileSync(hostingFile, 'cidr,provider\n81.2.69.0/24,Example Cloud\n<html>not a list</html>\n');
    const outcome = await h.composition.reloader.reloadAll();

    expect(outcome.failed.map((f) => f.name)).toEqual(['ip-hosting']);
    // The old table still answers, and so does every other dataset.
    expect((await h.call('/api/v1/ip/81.2.69.142')).body.security).toEqual({ isHosting: true, hostingProvider: 'Example Cloud', isTor: false });
    expect((await h.call('/api/v1/ip/3.5.140.1')).body.security).toMatchObject({ isHosting: true, hostingProvider: 'Amazon Web Services' });
    expect(await dataset('ip-hosting')).toMatchObject({ date: '2026-02-01' });
    const errors = h.logs.slice(before).filter((l) => JSON.parse(l).level >= 50);
    expect(errors).toHaveLength(1);
    expect(JSON.parse(errors[0])).toMatchObject({ dataset: 'ip-hosting', file: hostingFile, msg: `reload of ${hostingFile} failed; the data loaded before stays in use` });
    expect(JSON.parse(errors[0]).err).toMatch(/data line 3 is not "cidr,provider"/);
    expect(await metric('dataset_reload_failures_total', 'ip-hosting')).toBe(failuresBefore + 1);
  });

  it('keeps the data in use when a file has gone', async () => {
    writeFileSync(torFile, `${TOR}81.2.69.142\n`);
    expect((await h.composition.reloader.reloadAll()).failed).toEqual([]);
    rmSync(torFile);
    const outcome = await h.composition.reloader.reloadAll();
    expect(outcome.failed).toEqual([{ name: 'ip-tor-exits', file: torFile, error: expect.stringMatching(/ENOENT/) }]);
    expect((await h.call('/api/v1/ip/81.2.69.142')).body.security.isTor).toBe(true);
  });
});

describe('the shipped lists', () => {
  let shipped: Harness;
  beforeAll(async () => {
    shipped = await startHarness();
  });
  afterAll(() => shipped.close());

  it('are what the composition reads when HOSTING_RANGES_FILE, HOSTING_ASN_FILE and TOR_EXIT_FILE are unset', async () => {
    // An address of data/ip/tor-exits.txt and one in a range of data/ip/hosting-ranges.csv (neither in the GeoIP
    // test databases: only the lists can flag them).
    const tor = readFileSync(projectPath('data/ip/tor-exits.txt'), 'utf8').split('\n').find((l) => /^\d+\.\d+\.\d+\.\d+\/32$/.test(l))!;
    const aws = readFileSync(projectPath('data/ip/hosting-ranges.csv'), 'utf8').split('\n').find((l) => /^\d+\.\d+\.\d+\.0\/24,Amazon Web Services$/.test(l))!;
    expect((await shipped.call(`/api/v1/ip/${tor.replace('/32', '')}`)).body.security).toMatchObject({ isTor: true });
    expect((await shipped.call(`/api/v1/ip/${aws.replace('.0/24,Amazon Web Services', '.7')}`)).body.security).toMatchObject({ isHosting: true, hostingProvider: 'Amazon Web Services' });
    // Dated by the files' own date lines.
    const dates = ((await shipped.call('/readyz')).body.datasets as { name: string; date: string }[]).filter((d) => d.name.startsWith('ip-'));
    const dateLine = (file: string) => /^# date: (\S+)$/m.exec(readFileSync(projectPath(file), 'utf8'))?.[1];
    expect(dates).toEqual([
      expect.objectContaining({ name: 'ip-hosting', date: dateLine('data/ip/hosting-ranges.csv') }),
      expect.objectContaining({ name: 'ip-hosting-asns', date: dateLine('data/ip/hosting-asns.txt') }),
      expect.objectContaining({ name: 'ip-tor-exits', date: dateLine('data/ip/tor-exits.txt') }),
    ]);
  });
});

describe('createReloader', () => {
  const quiet = { info: () => undefined, error: () => undefined };

  it('a reload asked for while one runs is one more pass after it, not lost and not run twice at once', async () => {
    let running = 0;
    let most = 0;
    let passes = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const reloader = createReloader(
      [
        {
          name: 'x',
          files: () => ['x'],
          async reload() {
            running++;
            most = Math.max(most, running);
            passes++;
            if (passes === 1) await gate;
            running--;
          },
        },
      ],
      quiet,
      { reread: async () => ({ record: () => RECORD('x') }) },
    );
    const first = reloader.reloadAll();
    const second = reloader.reloadAll();
    const third = reloader.reloadAll();
    release();
    await Promise.all([first, second, third]);
    expect(passes).toBe(2);
    expect(most).toBe(1);
  });
});

describe('data/datasets.json read once per reload pass', () => {
  const quiet = { info: () => undefined, error: () => undefined };
  const NAMES = ['list-a', 'list-b', 'list-c'];
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'vls-reload-once-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  /** Three datasets over files of their own and a datasets.json of their records, its reads counted. */
  async function setUp() {
    const catalogueFile = join(folder, 'datasets.json');
    const writeRecords = (extra: object) => writeFileSync(catalogueFile, JSON.stringify({ datasets: NAMES.map((n) => ({ ...RECORD(n), ...extra })) }));
    writeRecords({});
    let reads = 0;
    const catalogue = await openCatalogue(catalogueFile, (path) => (reads++, readFile(path, 'utf8')));
    const datasets = NAMES.map((name) => {
      const file = join(folder, `${name}.txt`);
      writeFileSync(file, name);
      return new Dataset<string>({ name, files: () => [file], read: async () => ({ value: await readFile(file, 'utf8') }) }, catalogue);
    });
    for (const d of datasets) await d.load();
    return { datasets, writeRecords, reads: () => reads, reloader: createReloader(datasets, quiet, catalogue) };
  }

  it('is read once at start for every first load, and once more by each pass for all its datasets', async () => {
    const { reloader, reads } = await setUp();
    expect(reads()).toBe(1);
    expect((await reloader.reloadAll()).reloaded).toEqual(NAMES);
    expect(reads()).toBe(2);
    await reloader.reloadAll();
    expect(reads()).toBe(3);
  });

  it("each dataset takes its record from the pass's one read: a new validity applies to all", async () => {
    const { reloader, writeRecords, datasets, reads } = await setUp();
    writeRecords({ validUntil: '2026-01-15' });
    await reloader.reloadAll();
    expect(reads()).toBe(2);
    expect(datasets.map((d) => d.status(new Date('2026-02-01T00:00:00Z')).state)).toEqual(['expired', 'expired', 'expired']);
  });

  it('one read that fails fails every dataset of the pass, each keeping its value', async () => {
    const { reloader, datasets, reads } = await setUp();
    writeFileSync(join(folder, 'datasets.json'), 'not json');
    for (const d of NAMES) writeFileSync(join(folder, `${d}.txt`), 'new');
    const outcome = await reloader.reloadAll();
    expect(reads()).toBe(2);
    expect(outcome.failed.map((f) => f.name)).toEqual(NAMES);
    expect(datasets.map((d) => d.value)).toEqual(NAMES);
  });
});
