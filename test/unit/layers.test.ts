// The folders are the layers (README, Architecture): each module imports only from its own folder or a lower layer,
// and no modules import each other in a circle.
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
        // Static imports and re-exports (type-only ones too: they tie the layers as much), and dynamic import('...').
        for (const m of readFileSync(path, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '(\.{1,2}\/[^']+)'|\bimport\('(\.{1,2}\/[^']+)'\)/gms)) {
          out.push([relative(SRC, path), relative(SRC, resolve(dirname(path), m[1] ?? m[2])).replace(/\.js$/, '.ts')]);
        }
      }
    }
  };
  walk(SRC);
  return out;
}

/**
 * Each module's layer, lowest first: a folder (its first path segment) or a top-level file. The error model and
 * ConfigError import nothing; domain is pure; adapters touch the outside world; the composition root is on top.
 */
const LAYERS: string[][] = [
  ['errors.ts', 'node-floor.ts', '..'], // '..' is generated/, the types openapi-typescript writes
  ['domain'],
  ['config.ts', 'adapters'],
  ['accounts', 'error-answers.ts'],
  ['operations'],
  ['http', 'cli'],
  ['app.ts', 'server.ts', 'heap-tuning.ts'],
  ['capabilities'],
  ['compose.ts'],
  ['serve.ts'],
  ['main.ts'],
];
const unitOf = (path: string) => path.split('/')[0];
const rankOf = (path: string) => LAYERS.findIndex((layer) => layer.includes(unitOf(path)));

const all = imports();

/** Import cycles: each as the chain of modules that leads back to its start (depth-first search). */
function cycles(edges: [string, string][]): string[][] {
  const next = new Map<string, string[]>();
  for (const [from, to] of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const to of next.get(node) ?? []) {
      if (state.get(to) === 'open') found.push([...stack.slice(stack.indexOf(to)), to]);
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of next.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe('layers', () => {
  it('finds the imports it checks', () => {
    expect(all).toContainEqual(['http/api.ts', 'errors.ts']);
    expect(all).toContainEqual(['capabilities/shared/store.ts', 'adapters/limits/redis-counters.ts']); // a dynamic import
    expect(all.length).toBeGreaterThan(100);
  });

  it('places every module of src/ in a layer', () => {
    expect([...new Set(all.flat().map(unitOf))].filter((unit) => rankOf(unit) < 0)).toEqual([]);
  });

  it('imports only from the same folder or a lower layer', () => {
    const upward = all.filter(([from, to]) => unitOf(from) !== unitOf(to) && rankOf(to) >= rankOf(from));
    expect(upward).toEqual([]);
  });

  it.each(['errors.ts', 'node-floor.ts'])('%s imports nothing of src/', (file) => {
    expect(all.filter(([from, to]) => from === file && unitOf(to) !== '..')).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(cycles(all)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    expect(cycles([['a.ts', 'b.ts'], ['b.ts', 'c.ts'], ['c.ts', 'a.ts']])).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
