// The repository is the whole product: no source, test, bench, script, Makefile or config path reaches outside it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

/** Directories that hold no project code: dependencies, build and run outputs, third-party test data. */
const SKIP_DIRS = new Set(['.git', '.node', 'node_modules', 'dist', 'var', 'coverage', 'test/artifacts', 'bench/results', 'test/fixtures/geoip']);
/** Build and run outputs a path may name before they exist (make build, DATA_DIR, the browser test, make's pinned Node). */
const OUTPUTS = ['dist', 'var', 'node_modules', 'coverage', 'test/artifacts', 'bench/results', '.node'];
/** Code read with paths relative to its own file (imports, new URL(..., import.meta.url), tsconfig extends, Arazzo). */
const CODE = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json', '.yaml', '.yml']);

type Kind = 'code' | 'shell';

/** Every file of the project the guard reads, with how its relative paths resolve. */
function projectFiles(dir = ROOT, out: Array<{ path: string; kind: Kind }> = []): Array<{ path: string; kind: Kind }> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(ROOT, path).split(sep).join('/');
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(rel) && entry.name !== 'node_modules') projectFiles(path, out);
    } else if (entry.isFile()) {
      if (CODE.has(extname(entry.name))) out.push({ path, kind: 'code' });
      else if (entry.name === 'Makefile' || entry.name === '.npmrc' || extname(entry.name) === '.sh') out.push({ path, kind: 'shell' });
      else if (!extname(entry.name) && readFileSync(path, 'utf8').startsWith('#!')) out.push({ path, kind: 'shell' });
    }
  }
  return out;
}

const inside = (p: string): boolean => p === ROOT || p.startsWith(ROOT + sep);

/** Whether a path inside the repository names something there: a file, its .ts source for a .js import, or an output. */
function named(p: string): boolean {
  if (existsSync(p) || (p.endsWith('.js') && existsSync(p.slice(0, -3) + '.ts'))) return true;
  const rel = relative(ROOT, p).split(sep).join('/');
  return OUTPUTS.some((o) => rel === o || rel.startsWith(o + '/'));
}

interface Finding {
  file: string;
  line: number;
  text: string;
  why: string;
}

/** Relative path literals ('.', '..', './x', '../x'; a template's static prefix) of a JS/TS/JSON/YAML file. */
function codePaths(text: string): Array<{ index: number; path: string; complete: boolean }> {
  const found: Array<{ index: number; path: string; complete: boolean }> = [];
  for (const m of text.matchAll(/(['"`])(\.{1,2}(?:\/[^'"`\s$]*)?)(\$\{|\1)/g)) found.push({ index: m.index, path: m[2], complete: m[3] !== '${' });
  // Unquoted YAML values: `url: ../../openapi.yaml`.
  for (const m of text.matchAll(/:\s+(\.{1,2}\/[^\s'"#]*)/g)) found.push({ index: m.index, path: m[1], complete: true });
  return found;
}

/** Relative path words of a Makefile or shell script (run from the repository root); $(dirname "$0") is the file's own folder. */
function shellPaths(text: string, file: string): Array<{ index: number; path: string; complete: boolean }> {
  const own = './' + relative(ROOT, dirname(file)).split(sep).join('/');
  const found: Array<{ index: number; path: string; complete: boolean }> = [];
  const spelled = text.replace(/\$\(dirname\s+"?\$(?:0|\{BASH_SOURCE\[0\]\})"?\)/g, own);
  for (const m of spelled.matchAll(/(?<=^|[\s'"=:(,])(\.{1,2}(?:\/[^\s'"`;)$]*)?)(?=$|[\s'"`;)])/gm)) found.push({ index: m.index, path: m[1], complete: true });
  return found;
}

const lineOf = (text: string, index: number): number => text.slice(0, index).split('\n').length;

/** Absolute paths that can only mean "beside this checkout": home and work folders, and this checkout's parent. */
function outsideRoots(): string[] {
  const roots = ['work', 'home', 'root', 'Users'].map((d) => `/${d}/`);
  const parent = dirname(ROOT);
  if (parent !== '/' && resolve(parent) !== resolve(tmpdir())) roots.push(parent + '/');
  return [...new Set(roots)];
}

/** What is wrong with one file's paths: relative ones resolved from its folder (code) or the root (shell), absolute ones. */
function findingsIn(file: string, kind: Kind, text: string): Finding[] {
  const findings: Finding[] = [];
  const report = (index: number, why: string) => {
    const line = lineOf(text, index);
    findings.push({ file: relative(ROOT, file), line, text: text.split('\n')[line - 1].trim().slice(0, 160), why });
  };
  const base = kind === 'code' ? dirname(file) : ROOT;
  for (const { index, path, complete } of kind === 'code' ? codePaths(text) : shellPaths(text, file)) {
    const target = resolve(base, path);
    if (!inside(target)) report(index, `${path} resolves above the repository root`);
    // A path a program opens from the working directory (the root, as make runs it) may name nothing beside its file.
    else if (complete && kind === 'code' && !named(target) && !(inside(resolve(ROOT, path)) && named(resolve(ROOT, path)))) {
      report(index, `${path} names nothing in the repository`);
    }
  }
  for (const r of [...outsideRoots(), ['..', 'shared', ''].join('/')]) {
    for (let i = text.indexOf(r); i >= 0; i = text.indexOf(r, i + 1)) report(i, `names ${r}, outside the repository`);
  }
  return findings;
}

/** This file is left out: its probes below spell the very paths the scan must catch. */
const SELF = fileURLToPath(import.meta.url);

function scan(): Finding[] {
  return projectFiles()
    .filter((f) => f.path !== SELF)
    .flatMap(({ path, kind }) => findingsIn(path, kind, readFileSync(path, 'utf8')));
}

const show = (fs: Finding[]) => fs.map((f) => `${f.file}:${f.line}: ${f.why}\n    ${f.text}`).join('\n');

describe('no path leaves the repository', () => {
  it('finds the project files it guards (sources, tests, bench, scripts, Makefile, configs)', () => {
    const files = projectFiles().map((f) => relative(ROOT, f.path).split(sep).join('/'));
    for (const f of ['Makefile', '.npmrc', '.ci/run', 'vitest.config.ts', 'tsconfig.json', 'src/main.ts', 'bench/soak.ts', 'test/fixtures/paths.ts']) {
      expect(files).toContain(f);
    }
    expect(files.some((f) => f.startsWith('scripts/'))).toBe(true);
    expect(files.some((f) => f.startsWith('node_modules/') || f.startsWith('test/fixtures/geoip/'))).toBe(false);
  });

  it('every relative path stays inside and names something there; no absolute path beside the checkout', () => {
    const findings = scan();
    expect(findings, show(findings)).toEqual([]);
  });

  it('the test data the tests read is in the repository, with its licences', () => {
    const dir = join(ROOT, 'test/fixtures/geoip');
    for (const f of ['GeoIP2-City-Test.mmdb', 'GeoLite2-City-Test.mmdb', 'GeoLite2-ASN-Test.mmdb', 'LICENSE-APACHE', 'LICENSE-MIT', 'README.md']) {
      expect(existsSync(join(dir, f)), f).toBe(true);
    }
    for (const f of ['GeoIP2-City-Test', 'GeoLite2-City-Test', 'GeoLite2-ASN-Test']) expect(existsSync(join(dir, `${f}.json`)), f).toBe(true);
  });
});

/** The guard itself: each pattern it must catch, in a file of its kind (the file need not exist). */
describe('the scan catches', () => {
  const probe = (kind: Kind, file: string, text: string): string[] => findingsIn(join(ROOT, file), kind, text).map((f) => f.why);

  it('new URL(..) above the root, from a test file', () => {
    expect(probe('code', 'test/unit/x.test.ts', "new URL('../../../elsewhere/geoip/', import.meta.url)")).toEqual([
      '../../../elsewhere/geoip/ resolves above the repository root',
    ]);
    expect(probe('code', 'test/unit/x.test.ts', "new URL('../../', import.meta.url); new URL('../../data/bin/ranges.csv', import.meta.url)")).toEqual([]);
  });

  it('join(ROOT, "../x"): a path that names nothing in the tree', () => {
    expect(probe('code', 'bench/soak.ts', "join(ROOT, '../elsewhere/geoip')")).toEqual(['../elsewhere/geoip names nothing in the repository']);
    expect(probe('code', 'bench/soak.ts', "import { x } from '../test/fixtures/paths.js'; join(ROOT, '../dist/src/main.js')")).toEqual([]);
  });

  it('an import or a template prefix above the root, and an unquoted YAML value', () => {
    expect(probe('code', 'src/x.ts', "import '../../lib/x.js'")).toEqual(['../../lib/x.js resolves above the repository root']);
    expect(probe('code', 'src/x.ts', '`../../${name}.json`')).toEqual(['../../ resolves above the repository root']);
    expect(probe('code', 'test/workflows/a.yaml', 'url: ../../../openapi.yaml')).toEqual(['../../../openapi.yaml resolves above the repository root']);
    expect(probe('code', 'test/workflows/a.yaml', 'url: ../../openapi.yaml')).toEqual([]);
  });

  it('a Makefile or script that climbs out of the root', () => {
    expect(probe('shell', 'Makefile', 'GEO := ../elsewhere\n\tcp $(GEO)/x .')).toEqual(['../elsewhere resolves above the repository root']);
    expect(probe('shell', '.ci/run', 'cd "$(dirname "$0")/.."')).toEqual([]);
    expect(probe('shell', '.ci/run', 'cd "$(dirname "$0")/../.."')).toEqual(['./.ci/../.. resolves above the repository root']);
  });

  it('absolute paths under a work or home folder, and the sibling shared folder, comments included', () => {
    const work = ['', 'work', 'data', 'x.mmdb'].join('/');
    expect(probe('code', 'src/x.ts', `const f = '${work}';`)).toEqual([`names ${['', 'work', ''].join('/')}, outside the repository`]);
    expect(probe('code', 'src/x.ts', `// read from <repo>/${['..', 'shared', 'OPS.md'].join('/')}`)).toEqual([
      `names ${['..', 'shared', ''].join('/')}, outside the repository`,
    ]);
    expect(probe('code', 'src/x.ts', "const docs = '/usr/bin/chromium'; const api = '/api/v1/ip';")).toEqual([]);
  });
});
