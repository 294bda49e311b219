// Small functions (the developers' guide: under 80 lines): every function, method and arrow function of src/, measured
// from its first line to its last by the TypeScript parser, so that a long one is split where it is written.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const MAX_LINES = 80;
/** Functions known to be long and being split; none now (the verifier's three left it with issue #55). */
const PENDING = new Set<string>([]);

/** Each function-like node with a body in `text`, as "<file> <name>" and its length in lines. */
function functionLengths(file: string, text: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: { name: string; lines: number }[] = [];
  const nameOf = (node: ts.SignatureDeclaration): string => {
    if (node.name) return node.name.getText(source);
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
    return `<anonymous at line ${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}>`;
  };
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      out.push({ name: `${file} ${nameOf(node)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const all = sources().flatMap((path) => functionLengths(relative(SRC, path), readFileSync(path, 'utf8')));

describe('function length', () => {
  it('measures what it checks', () => {
    expect(all.length).toBeGreaterThan(500);
    expect(functionLengths('x.ts', `const f = () => {\n${'  a();\n'.repeat(80)}};\nclass C { m() { return 1; } }\n`)).toEqual([
      { name: 'x.ts f', lines: 82 },
      { name: 'x.ts m', lines: 1 },
    ]);
  });

  it(`has no function of src/ over ${MAX_LINES} lines`, () => {
    expect(all.filter((f) => f.lines > MAX_LINES && !PENDING.has(f.name))).toEqual([]);
  });

  it('lists as pending only functions that are still long', () => {
    const long = new Set(all.filter((f) => f.lines > MAX_LINES).map((f) => f.name));
    expect([...PENDING].filter((name) => !long.has(name))).toEqual([]);
  });
});
