// The Node floor (issue #49, item 7): package.json engines, .nvmrc (what CI runs) and src/node-floor.ts name one
// version; an older Node gets one line naming it and exit 1 from the server, the keys CLI and npm's scripts, before
// any native module (better-sqlite3) loads. Tried with the machine's own old Node when it has one, and always with a
// faked version on this Node.
// @module-tag slow (left out of make test-fast): starts processes
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLOOR, nodeFloorRefusal } from '../../src/node-floor.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ONE_LINE = new RegExp(`^this service needs Node ${NODE_FLOOR.replace(/\./g, '\\.')} or later \\(package\\.json engines\\), not v[0-9.]+: [^\\n]*\\n$`);
const work = mkdtempSync(join(tmpdir(), 'node-floor-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The machine's own Node when it is older than the floor (Debian's system node here), else null. */
const OLD_NODE = (() => {
  const path = '/usr/bin/node';
  if (!existsSync(path)) return null;
  const v = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  return v && nodeFloorRefusal(v) !== null ? { path, version: v } : null;
})();

describe('one floor', () => {
  it(`package.json engines, .nvmrc and .node-version name ${NODE_FLOOR}, the Node CI tests`, () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(manifest.engines.node).toBe(`>=${NODE_FLOOR}`);
    expect(readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim()).toBe(NODE_FLOOR);
    expect(readFileSync(join(ROOT, '.node-version'), 'utf8').trim()).toBe(NODE_FLOOR);
  });

  it.each([
    ['20.20.2', false],
    ['22.12.0', false],
    ['24.20.9', false],
    ['24.21.0', true],
    ['24.21.1', true],
    ['24.100.0', true],
    ['25.0.0', true],
    ['100.0.0', true],
  ])('Node %s: supported %s', (version, ok) => {
    const refusal = nodeFloorRefusal(version);
    expect(refusal === null).toBe(ok);
    if (refusal) expect(`${refusal}\n`).toMatch(ONE_LINE);
  });
});

/** The compiled entry points beside stand-ins for what they load, which leave a mark when they are loaded. */
function compiledEntries(): string {
  const dir = join(work, 'dist');
  mkdirSync(join(dir, 'cli'), { recursive: true });
  const emit = (from: string, to: string) => {
    const source = readFileSync(join(ROOT, from), 'utf8');
    const out = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    writeFileSync(join(dir, to), out.outputText);
  };
  emit('src/main.ts', 'main.js');
  emit('src/node-floor.ts', 'node-floor.js');
  emit('src/cli/keys.ts', 'cli/keys.js');
  const mark = "import { appendFileSync } from 'node:fs'; appendFileSync(process.env.MARK, 'loaded\\n');";
  writeFileSync(join(dir, 'serve.js'), `${mark}\n`);
  writeFileSync(join(dir, 'cli/keys-command.js'), `${mark}\nexport async function main() {}\n`);
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  return dir;
}

describe.each([
  ['node dist/src/main.js', 'main.js'],
  ['the keys CLI (dist/src/cli/keys.js)', 'cli/keys.js'],
])('%s', (_label, entry) => {
  const dir = compiledEntries();
  const start = (node: string) => {
    const mark = join(work, `mark-${Math.random().toString(36).slice(2)}`);
    const r = spawnSync(node, [join(dir, entry)], { encoding: 'utf8', env: { PATH: process.env.PATH, MARK: mark }, timeout: 60_000 });
    return { ...r, loaded: existsSync(mark) };
  };

  it.skipIf(!OLD_NODE)(`on the machine's old Node (${OLD_NODE?.version ?? 'none here'}): one line, exit 1, nothing else loaded`, () => {
    const r = start(OLD_NODE!.path);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stdout).toBe('');
    expect(r.loaded).toBe(false);
  });

  it('on this Node: goes on to load the program', () => {
    const r = start(process.execPath);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.loaded).toBe(true);
  });
});

describe('the real entry points with a faked old version: no native module is opened', () => {
  // Preloaded before the entry: pretends to be another Node and logs every native module opened (process.dlopen).
  const preload = join(work, 'fake-node.mjs');
  writeFileSync(
    preload,
    [
      "import { appendFileSync } from 'node:fs';",
      "if (process.env.FAKE_NODE) Object.defineProperty(process, 'versions', { value: { ...process.versions, node: process.env.FAKE_NODE } });",
      'const dlopen = process.dlopen;',
      "process.dlopen = function (module, filename, ...rest) { appendFileSync(process.env.DLOPEN_LOG, `${filename}\\n`); return dlopen.call(this, module, filename, ...rest); };",
    ].join('\n'),
  );
  const run = (entry: string[], fake: string | null) => {
    const log = join(work, `dlopen-${Math.random().toString(36).slice(2)}`);
    const dataDir = mkdtempSync(join(work, 'data-'));
    const r = spawnSync(process.execPath, ['--import', preload, '--import', 'tsx', ...entry], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', FAKE_NODE: fake ?? '', DLOPEN_LOG: log, GEOIP_CITY_DB: '', GEOIP_ASN_DB: '' },
      timeout: 60_000,
    });
    return { ...r, opened: existsSync(log) ? readFileSync(log, 'utf8') : '' };
  };

  it.each([
    ['src/main.ts', ['src/main.ts']],
    ['src/cli/keys.ts list', ['src/cli/keys.ts', 'list']],
  ])('%s as Node 20.20.0: one line, exit 1, no native module', (_label, entry) => {
    const r = run(entry, '20.20.0');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stdout).toBe('');
    expect(r.opened).toBe('');
  });

  it('the same probe sees better-sqlite3 opened when the version is supported (keys list)', () => {
    const r = run(['src/cli/keys.ts', 'list'], null);
    expect(r.status, r.stderr).toBe(0);
    expect(r.opened).toMatch(/better_sqlite3|better-sqlite3/);
  });
});

describe('npm start and npm run keys (scripts/with-node) on an old system node without .node/', () => {
  // A checkout without .node/: the script, package.json and .nvmrc, and a `node` on PATH that says its version.
  const root = join(work, 'checkout');
  mkdirSync(join(root, 'scripts'), { recursive: true });
  for (const f of ['scripts/with-node', 'package.json', '.nvmrc']) copyFileSync(join(ROOT, f), join(root, f));
  const withNode = (version: string, ...args: string[]) => {
    const bin = join(work, `bin-${version}`);
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'node'), `#!/bin/sh\n[ "$1" = -v ] && echo v${version} && exit 0\necho "ran $*"\n`);
    chmodSync(join(bin, 'node'), 0o755);
    return spawnSync('bash', [join(root, 'scripts/with-node'), ...args], { encoding: 'utf8', env: { PATH: `${bin}:/usr/bin:/bin` } });
  };

  it.each(['20.20.2', '22.12.0', '24.20.0'])('node v%s: one line naming the floor, exit 1', (version) => {
    const r = withNode(version, 'node', 'dist/src/main.js');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^scripts/with-node: this service needs Node ${NODE_FLOOR.replace(/\./g, '\\.')} or later \\(package\\.json engines\\), not v${version.replace(/\./g, '\\.')}[^\\n]*\\n$`));
    expect(r.stdout).toBe('');
  });

  it.each([
    ['20.20.2', 'local'],
    ['24.20.0', 'local'],
    [NODE_FLOOR, 'system'],
    ['24.22.0', 'system'],
    ['25.0.0', 'system'],
  ])('node v%s: the source is %s', (version, source) => {
    expect(withNode(version, '--source').stdout.trim()).toBe(source);
  });
});
