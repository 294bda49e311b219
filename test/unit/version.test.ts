// One release version (Semantic Versioning 2.0.0) shared by the service, the contract, the SDK and the release documents.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseYaml } from '../support/yaml.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const json = (path: string) => JSON.parse(read(path)) as Record<string, any>;

/** The version in package.json: every other place must name the same one. */
const version = json('package.json').version as string;
const [major, minor] = version.split('.');

/** SECURITY.md's "Supported versions" table: the version cell of every row marked supported ("yes"). */
function supportedInSecurityPolicy(text: string): string[] {
  const section = text.split(/^## /m).find((s) => s.startsWith('Supported versions')) ?? '';
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  const cells = rows.map((row) => row.split('|').slice(1, -1).map((cell) => cell.trim()));
  return cells.filter((c) => c.slice(1).some((cell) => /^yes\b/.test(cell))).map((c) => c[0].replace(/`/g, '').split(' ')[0]);
}

/** CHANGELOG.md's released versions, newest first (Keep a Changelog 1.1.0 headings `## [x.y.z] - date`). */
function releasedInChangelog(text: string): string[] {
  return [...text.matchAll(/^## \[(\d[^\]]*)\] - \d{4}-\d{2}-\d{2}$/gm)].map((m) => m[1]);
}

describe('the release version', () => {
  it('is a plain x.y.z Semantic Versioning number', () => {
    expect(version).toMatch(/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/);
  });

  it('is the same in package-lock.json', () => {
    const lock = json('package-lock.json');
    expect([lock.version, lock.packages[''].version]).toEqual([version, version]);
  });

  it("is openapi.yaml's info.version", () => {
    expect(String(parseYaml(read('openapi.yaml')).info.version)).toBe(version);
  });

  it('is the SDK version (clients/typescript/package.json)', () => {
    expect(json('clients/typescript/package.json').version).toBe(version);
  });

  it("has a major version that matches the API's path (/api/v1)", () => {
    const paths = Object.keys(parseYaml(read('openapi.yaml')).paths as Record<string, unknown>);
    const apiMajors = new Set(paths.filter((p) => p.startsWith('/api/')).map((p) => p.split('/')[2]));
    expect([...apiMajors]).toEqual([`v${major}`]);
  });

  it("is the only supported line in SECURITY.md's table", () => {
    expect(supportedInSecurityPolicy(read('SECURITY.md'))).toEqual([`${major}.${minor}.x`]);
  });

  it("is CHANGELOG.md's newest release, below an [Unreleased] section", () => {
    const changelog = read('CHANGELOG.md');
    expect(releasedInChangelog(changelog)[0]).toBe(version);
    expect(changelog.indexOf('## [Unreleased]')).toBeGreaterThan(-1);
    expect(changelog.indexOf('## [Unreleased]')).toBeLessThan(changelog.indexOf(`## [${version}]`));
  });
});

describe('the readers above', () => {
  it('find a disagreement', () => {
    const policy = '## Supported versions\n\n| Version | Supported |\n|---|---|\n| 0.1.x | yes |\n| older | no |\n\n## Reporting\n| 9.9.x | yes |\n';
    expect(supportedInSecurityPolicy(policy)).toEqual(['0.1.x']);
    expect(releasedInChangelog('## [Unreleased]\n\n## [0.9.0] - 2026-01-02\n\n## [0.8.0] - 2025-12-01\n')).toEqual(['0.9.0', '0.8.0']);
  });
});
