// Boot-time files named by settings: a wrong path or content stops the boot with the variable's name.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadNamedFile, readCaBundle, requireDirectory } from '../../src/adapters/startup-files.js';
import { ConfigError } from '../../src/config.js';
import { createTestPki } from '../support/tls-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'vls-startup-'));
const file = (name: string, text: string): string => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const pki = createTestPki();

describe('readCaBundle', () => {
  it('returns a bundle of parseable certificates', async () => {
    const path = file('ca.pem', `# roots\n${pki.root.certPem}\n${pki.intermediate.certPem}`);
    await expect(readCaBundle('TLS_EXTRA_CA_FILE', path)).resolves.toContain('BEGIN CERTIFICATE');
  });

  it.each([
    ['a missing file', join(dir, 'absent.pem'), /^TLS_EXTRA_CA_FILE: .*absent\.pem: no such file or directory$/],
    ['a directory', dir, /^TLS_EXTRA_CA_FILE: .*: is a directory$/],
    ['text with no certificate', file('notes.pem', 'not a certificate\n'), /holds no PEM certificate/],
    ['a block that does not parse', file('bad.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), /certificate 1 does not parse/],
  ])('refuses %s', async (_, path, want) => {
    const err = await readCaBundle('TLS_EXTRA_CA_FILE', path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(want);
  });
});

describe('requireDirectory', () => {
  it('accepts a directory', async () => {
    await expect(requireDirectory('PWNED_PASSWORDS_DIR', dir)).resolves.toBeUndefined();
  });

  it.each([
    ['missing', join(dir, 'no-mirror'), /no such file or directory/],
    ['a file', file('plain.txt', 'x'), /is not a directory/],
  ])('refuses a path that is %s', async (_, path, want) => {
    await expect(requireDirectory('PWNED_PASSWORDS_DIR', path)).rejects.toThrow(want);
    await expect(requireDirectory('PWNED_PASSWORDS_DIR', path)).rejects.toThrow(/^PWNED_PASSWORDS_DIR: /);
  });
});

describe('loadNamedFile', () => {
  it('names the variable when the file cannot be read', async () => {
    const load = (p: string) => import('node:fs/promises').then((fs) => fs.readFile(p, 'utf8'));
    await expect(loadNamedFile('BIN_DATA_FILE', join(dir, 'ranges.csv'), load)).rejects.toThrow(/^BIN_DATA_FILE: .*no such file/);
  });

  it('passes other failures through unchanged', async () => {
    const boom = new SyntaxError('bad row');
    await expect(loadNamedFile('BIN_DATA_FILE', 'x', () => Promise.reject(boom))).rejects.toBe(boom);
  });
});

it('stops the server with exit 1 when PWNED_PASSWORDS_DIR does not exist', { timeout: 60_000 }, () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', DATA_DIR: mkdtempSync(join(tmpdir(), 'vls-data-')), PWNED_PASSWORDS_DIR: join(dir, 'no-mirror'), LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 50_000,
  });
  expect(run.status).toBe(1);
  expect(run.stderr).toMatch(/^configuration error: PWNED_PASSWORDS_DIR: .*no-mirror: no such file or directory$/m);
});
