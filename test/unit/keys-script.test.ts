// scripts/keys (what `npm run keys` runs): the keys CLI from the sources through tsx in a clone with its dev
// dependencies, from dist/ where tsx is not installed (the image, a production install), and one line when neither is.
// @module-tag slow (left out of make test-fast): starts processes
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'keys-script-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A project tree holding the scripts and package.json, and stand-in CLIs that say which one ran. */
function tree(name: string, parts: { src?: boolean; tsx?: boolean; dist?: boolean }): string {
  const root = join(work, name);
  mkdirSync(join(root, 'scripts'), { recursive: true });
  for (const f of ['scripts/keys', 'scripts/with-node', 'package.json']) copyFileSync(join(ROOT, f), join(root, f));
  if (parts.src) {
    mkdirSync(join(root, 'src/cli'), { recursive: true });
    // A type annotation: only tsx's compile step lets node run it.
    writeFileSync(join(root, 'src/cli/keys.ts'), `const from: string = 'src';\nconsole.log(from, process.argv.slice(2).join(' '));\n`);
  }
  if (parts.tsx) {
    mkdirSync(join(root, 'node_modules'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules/tsx'), join(root, 'node_modules/tsx'));
  }
  if (parts.dist) {
    mkdirSync(join(root, 'dist/src/cli'), { recursive: true });
    writeFileSync(join(root, 'dist/src/cli/keys.js'), `console.log('dist', process.argv.slice(2).join(' '));\n`);
  }
  return root;
}

const keys = (root: string) => spawnSync(join(root, 'scripts/keys'), ['list', '--json'], { cwd: root, encoding: 'utf8' });

describe('scripts/keys', () => {
  it('runs the sources through tsx when both are there (a clone after npm ci)', () => {
    const r = keys(tree('clone', { src: true, tsx: true, dist: true }));
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('src list --json\n');
  });

  it.each([
    ['the image: no src/, no tsx', { dist: true }],
    ['a production install: src/ but no tsx', { src: true, dist: true }],
  ])('runs dist/ in %s', (name, parts) => {
    const r = keys(tree(name.replace(/\W+/g, '-'), parts));
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('dist list --json\n');
  });

  it('says what to do, exit 1, when there is neither', () => {
    const r = keys(tree('bare', { src: true }));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^scripts\/keys: no way to run the keys CLI here: .*npm ci.*npm run build\)\n$/);
  });
});
