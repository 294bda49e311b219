// The zxcvbn fork (src/adapters/password/zxcvbn/) holds only for the library versions its differential tests were
// verified against: package.json pins them, and the installed ones must be those (README.md there: upgrading).
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERIFIED_VERSIONS } from '../../src/adapters/password/zxcvbn/index.js';

const require = createRequire(import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
const packages = Object.entries(VERIFIED_VERSIONS);

describe('zxcvbn-ts versions', () => {
  it('names every @zxcvbn-ts package the service depends on', () => {
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@zxcvbn-ts/')).sort()).toEqual(Object.keys(VERIFIED_VERSIONS).sort());
  });

  it.each(packages)('package.json pins %s to %s exactly', (name, version) => {
    expect(manifest.dependencies[name]).toBe(version);
  });

  it.each(packages)('the installed %s is %s', (name, version) => {
    expect((require(`${name}/package.json`) as { version: string }).version).toBe(version);
  });
});

describe('the fork stays in its room', () => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  const room = 'adapters/password/zxcvbn/';
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => relative(src, join(src, f)));

  it('the library\'s internal files are loaded only in src/adapters/password/zxcvbn/', () => {
    const outside = files.filter((f) => !f.startsWith(room) && /@zxcvbn-ts\/core\/(dist|src)\//.test(readFileSync(join(src, f), 'utf8')));
    expect(outside).toEqual([]);
    expect(files.filter((f) => f.startsWith(room) && readFileSync(join(src, f), 'utf8').includes('@zxcvbn-ts/core/dist/')).length).toBeGreaterThan(0);
  });
});
