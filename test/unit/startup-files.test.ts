// Boot-time files named by settings: a wrong path or content stops the boot with the variable's name.
// @module-tag slow (left out of make test-fast): starts server processes
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDirectorySync, readCaBundle, requireDirectory } from '../../src/adapters/files/startup-files.js';
import { ConfigError } from '../../src/errors.js';
import { GEOIP_TEST_DIR } from '../support/harness.js';
import { runServerProcess } from '../support/server-process.js';
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

it('stops the server with exit 1 when PWNED_PASSWORDS_DIR does not exist', { timeout: 180_000 }, async () => {
  const run = await runServerProcess({ env: { PWNED_PASSWORDS_DIR: join(dir, 'no-mirror'), LOG_LEVEL: 'silent' } });
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/^configuration error: PWNED_PASSWORDS_DIR: .*no-mirror: no such file or directory$/m);
});

describe('ensureDirectorySync (DATA_DIR)', () => {
  it('creates the missing levels', () => {
    const path = join(dir, 'a', 'b', 'c');
    ensureDirectorySync('DATA_DIR', path);
    expect(statSync(path).isDirectory()).toBe(true);
    ensureDirectorySync('DATA_DIR', path); // already there: nothing to do
  });

  it.each([
    ['a file in the way', () => file('plain.txt', 'x'), /^DATA_DIR: .*plain\.txt is not a directory$/],
    ['a file as a parent', () => join(file('parent.txt', 'x'), 'sub'), /^DATA_DIR: .*parent\.txt\/sub: a part of the path is not a directory$/],
    ['a place nothing can be created (Node\'s recursive mkdir never returns there)', () => '/proc/vls-nope/data', /^DATA_DIR: \/proc\/vls-nope\/data cannot be created: /],
  ])('%s is a ConfigError naming DATA_DIR', (_name, path, want) => {
    expect(() => ensureDirectorySync('DATA_DIR', path())).toThrow(want);
    expect(existsSync('/proc/vls-nope')).toBe(false);
  });
});

/** Start the server (src/main.ts) with `env` on top of a quiet default; resolves with its exit code and stderr. */
const boot = (env: Record<string, string>) => runServerProcess({ env: { LOG_LEVEL: 'silent', ...env } });

describe('settings that stop the boot naming their variable (exit 1)', { timeout: 180_000 }, () => {
  const city = join(GEOIP_TEST_DIR, 'GeoIP2-City-Test.mmdb');
  const asn = join(GEOIP_TEST_DIR, 'GeoLite2-ASN-Test.mmdb');
  it.concurrent.each([
    ['GEOIP_CITY_DB missing', { GEOIP_CITY_DB: join(dir, 'absent.mmdb'), GEOIP_ASN_DB: asn }, /^configuration error: GEOIP_CITY_DB: .*absent\.mmdb: no such file or directory$/m],
    ['GEOIP_CITY_DB an ASN database', { GEOIP_CITY_DB: asn, GEOIP_ASN_DB: asn }, /^configuration error: GEOIP_CITY_DB: .*database type GeoLite2-ASN is not a City database$/m],
    ['GEOIP_ASN_DB not a MaxMind file', { GEOIP_CITY_DB: city, GEOIP_ASN_DB: file('asn.txt', 'not a database') }, /^configuration error: GEOIP_ASN_DB: .*asn\.txt: not a MaxMind DB file$/m],
    ['DATA_DIR under a file', { DATA_DIR: join(file('data.txt', 'x'), 'data') }, /^configuration error: DATA_DIR: .*data\.txt\/data: a part of the path is not a directory$/m],
    ['GEOIP_ASN_DB bad while the bundled City database is absent', { GEOIP_CITY_DB: '', GEOIP_ASN_DB: file('asn2.txt', 'x') }, /^configuration error: GEOIP_ASN_DB: .*asn2\.txt: not a MaxMind DB file$/m],
    ['BIN_DATA_FILE without a BIN range', { BIN_DATA_FILE: file('bins.csv', 'hello,world\n1,2\n') }, /^configuration error: BIN_DATA_FILE: .*bins\.csv holds no BIN range/m],
    ['HOST not of this machine', { HOST: '203.0.113.7' }, /^configuration error: HOST: 203\.0\.113\.7 is not an address of this machine$/m],
  ])('%s', async (_name, env, want) => {
    const run = await boot({ GEOIP_CITY_DB: city, GEOIP_ASN_DB: asn, ...env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(want);
  });

  it('PORT already in use', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as AddressInfo).port;
    try {
      const run = await boot({ PORT: String(port), GEOIP_CITY_DB: city, GEOIP_ASN_DB: asn });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^configuration error: PORT: port ${port} is already in use on 127\\.0\\.0\\.1$`, 'm'));
    } finally {
      taken.close();
    }
  });
});
