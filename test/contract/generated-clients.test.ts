// openapi.yaml as REST consumers use it (issue #51): the TypeScript client generators they pick each write a client
// into a temp folder, and `tsc --strict` compiles it. A failure names the generator, its version and the first error.
// Our own SDK's generator (openapi-typescript) is compiled by the project's tsc already.
// @module-tag slow (left out of make test-fast): runs three code generators and tsc
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYaml } from '../support/yaml.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SPEC = join(ROOT, 'openapi.yaml');

interface Generator {
  /** The npm package, pinned exactly in package.json's devDependencies. */
  name: string;
  /** Its command in node_modules/.bin. */
  bin: string;
  /** The folder under the temp folder it writes to. */
  dir: string;
  args(out: string): string[];
}

const GENERATORS: Generator[] = [
  { name: 'orval', bin: 'orval', dir: 'orval', args: (out) => ['--input', SPEC, '--output', join(out, 'api.ts'), '--client', 'fetch'] },
  { name: '@hey-api/openapi-ts', bin: 'openapi-ts', dir: 'hey-api', args: (out) => ['--input', SPEC, '--output', out] },
  { name: 'swagger-typescript-api', bin: 'swagger-typescript-api', dir: 'swagger-typescript-api', args: (out) => ['generate', '--path', SPEC, '--output', out, '--name', 'api.ts'] },
];

/** What a consumer's project would compile with: strict, ES2022, the DOM's fetch types, a bundler's module resolution. */
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: [],
    pretty: false,
  },
  include: GENERATORS.map((g) => `${g.dir}/**/*.ts`),
};

interface Run {
  code: number | null;
  output: string;
}

function run(args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

const versionOf = async (name: string) => (JSON.parse(await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
const firstLine = (text: string) => text.split('\n').find((l) => /error/i.test(l))?.trim() ?? text.trim().split('\n')[0];

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((f) => f.endsWith('.ts')).map((f) => join(dir, f));
}

let work: string;
const generated = new Map<string, Run>();
let compiled: Run;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'generated-clients-'));
  await Promise.all(
    GENERATORS.map(async (g) => generated.set(g.name, await run([join(ROOT, 'node_modules/.bin', g.bin), ...g.args(join(work, g.dir))], work))),
  );
  await writeFile(join(work, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  // One compiler run for the three clients (each in its own folder, modules without globals): a third of the start-up.
  compiled = await run([join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(work, 'tsconfig.json')], work);
}, 180_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('generated clients compile under tsc --strict', () => {
  it.each(GENERATORS.map((g) => [g.name, g] as const))('%s', async (_name, g) => {
    const label = `${g.name} ${await versionOf(g.name)}`;
    const gen = generated.get(g.name)!;
    expect(gen.code, `${label} could not generate a client: ${firstLine(gen.output)}`).toBe(0);
    const files = await filesUnder(join(work, g.dir));
    expect(files.length, `${label} wrote no TypeScript`).toBeGreaterThan(0);
    const errors = compiled.output.split('\n').filter((l) => l.startsWith(`${g.dir}/`) && /: error TS\d+:/.test(l));
    expect(errors[0], `${label}: ${errors.length} compile errors, the first: ${errors[0]}`).toBeUndefined();
    // The shared error code is a named type, the one both error shapes refer to.
    const text = (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
    expect(text, `${label} names no ErrorCode type`).toMatch(/\b(?:type|enum) ErrorCode\b/);
  });

  it('the compiler itself ran (no error outside the clients)', () => {
    const other = compiled.output.split('\n').filter((l) => /error TS\d+:/.test(l) && !GENERATORS.some((g) => l.startsWith(`${g.dir}/`)));
    expect(other).toEqual([]);
  });
});

describe('every schema a generator must name is a component', () => {
  const refs: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.push(v);
        else walk(v);
      }
    }
  };
  walk(parseYaml(readFileSync(SPEC, 'utf8')));

  it('no $ref points into another schema (its properties, items...): each names a whole component', () => {
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((r) => !/^#\/components\/[A-Za-z]+\/[^/]+$/.test(r))).toEqual([]);
  });
});
