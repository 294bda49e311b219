// A BIN_DATA_FILE the service cannot use stops the start with the texts operators saw before the Dataset mechanism
// (6662caf, checked by booting it): the setting, the file and what is wrong; `configuration error: ` is serve.ts's
// prefix (test/unit/startup-files.test.ts boots one). A failure that is not the file's is ours: it passes unchanged.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Dataset } from '../../src/adapters/files/dataset.js';
import { openCatalogue } from '../../src/adapters/files/datasets.js';
import { card } from '../../src/capabilities/card.js';
import { ConfigError } from '../../src/errors.js';
import { createLogger } from '../../src/http/logging.js';
import { projectPath } from '../../src/http/spec.js';

const dir = mkdtempSync(join(tmpdir(), 'vls-bin-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => (writeFileSync(join(dir, name), content), join(dir, name));
const NO_RANGE = 'holds no BIN range (a CSV with an iin_start column)';

/** The card capability started on `path` alone; resolves with the start's error. */
async function startOn(path: string): Promise<unknown> {
  const catalogue = await openCatalogue(projectPath('data/datasets.json'));
  const ctx = { config: { binDataFile: path }, catalogue, logger: createLogger('silent') };
  return Promise.resolve(card.start(ctx as never, undefined)).then(() => null, (err: unknown) => err);
}

describe('a BIN_DATA_FILE that cannot be used at start', () => {
  it.each([
    ['missing', () => join(dir, 'absent.csv'), (p: string) => `${p}: no such file or directory`],
    ['a directory', () => (mkdirSync(join(dir, 'folder')), join(dir, 'folder')), (p: string) => `${p}: is a directory`],
    ['empty', () => file('empty.csv', ''), (p: string) => `${p} ${NO_RANGE}`],
    ['without an iin_start column', () => file('other.csv', 'hello,world\n1,2\n'), (p: string) => `${p} ${NO_RANGE}`],
    ['bytes that are no CSV', () => file('noise.csv', Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x22, 0x2c, 0x0d])), (p: string) => `${p} ${NO_RANGE}`],
  ])('%s: a ConfigError naming BIN_DATA_FILE and the file', async (_name, path, text) => {
    const p = path();
    const err = await startOn(p);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(`BIN_DATA_FILE: ${text(p)}`);
  });

  it('a usable file starts the capability', async () => {
    expect(await startOn(file('one.csv', 'iin_start,scheme\n411111,visa\n'))).toBeNull();
  });

  it('a failure that is not the file (a fault of the reader) is not told as a configuration error', async () => {
    const catalogue = await openCatalogue(projectPath('data/datasets.json'));
    const fault = new TypeError('a fault of ours');
    const read = () => Promise.reject(fault);
    const bin = new Dataset({ name: 'bin-ranges', files: () => ['x.csv'], read, variable: 'BIN_DATA_FILE', contentErrorsNameVariable: false }, catalogue);
    await expect(bin.load()).rejects.toBe(fault);
  });
});
