// The folders are the layers (README, Layout): domain code is pure, and only the composition root and http/ itself
// import the transport (issue #26: http/ holds transport only; no http <-> operations cycle).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Every relative import of every module under src/, as [importer, imported] paths relative to src/. */
function imports(): [string, string][] {
  const out: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        // Static imports and re-exports, and dynamic import('...') calls.
        for (const m of readFileSync(path, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '(\.{1,2}\/[^']+)'|\bimport\('(\.{1,2}\/[^']+)'\)/gms)) {
          out.push([relative(SRC, path), relative(SRC, resolve(dirname(path), m[1] ?? m[2])).replace(/\.js$/, '.ts')]);
        }
      }
    }
  };
  walk(SRC);
  return out;
}

const all = imports();
const folderOf = (path: string) => (path.includes('/') ? path.split('/')[0] : '.');

describe('layers', () => {
  it('finds the imports it checks', () => {
    expect(all).toContainEqual(['http/api.ts', 'errors.ts']);
    expect(all).toContainEqual(['compose.ts', 'adapters/redis-counters.ts']); // a dynamic import
    expect(all.length).toBeGreaterThan(100);
  });

  it.each<[string, string[]]>([
    ['domain', ['http', 'operations', 'accounts', 'adapters', 'cli']],
    ['operations', ['http', 'cli']],
    ['accounts', ['http', 'operations', 'cli']],
    ['adapters', ['http', 'operations', 'accounts', 'cli']],
  ])('%s/ imports nothing from %j', (folder, forbidden) => {
    const offending = all.filter(([from, to]) => folderOf(from) === folder && forbidden.includes(folderOf(to)));
    expect(offending).toEqual([]);
  });
});
