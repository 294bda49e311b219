// The keys CLI, run as a real process against the store a running server uses.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
let dataDir: string;
let h: Harness;

async function keys(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', ...args], {
      env: { ...process.env, DATA_DIR: dataDir },
    });
    return { stdout, stderr, code: 0 };
  } catch (err: any) {
    return { stdout: err.stdout, stderr: err.stderr, code: err.code };
  }
}

async function statusWithin(key: string, want: number, ms = 1000): Promise<number> {
  const deadline = Date.now() + ms;
  let status = 0;
  do {
    status = (await h.call('/api/v1/bic/DEUTDEFF', { key })).status;
    if (status === want) return status;
    await new Promise((r) => setTimeout(r, 50));
  } while (Date.now() < deadline);
  return status;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vls-cli-'));
  h = await startHarness({ DATA_DIR: dataDir });
});
afterAll(async () => {
  await h.close();
  rmSync(dataDir, { recursive: true, force: true });
});

// Every case spawns the CLI (tsx start-up included): generous timeouts for a loaded 2-core machine.
describe('npm run keys', { timeout: 60_000 }, () => {
  it('creates a key that the running server accepts within a second, and prints only the key', async () => {
    const { stdout, code } = await keys('create', '--name', 'alice');
    expect(code).toBe(0);
    const key = stdout.trim();
    expect(key).toMatch(/^vls_[A-Za-z0-9_-]{32}$/);
    expect(await statusWithin(key, 200)).toBe(200);
  });

  it('prints the key alone on stdout through `npm run keys` itself, as OPERATIONS.md spells the command', async () => {
    // npm's "> pkg keys" banner goes to stdout unless npm is silent: the project's .npmrc makes it so.
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
    for (const name of Object.keys(env)) if (/^npm_config_loglevel$/i.test(name)) delete env[name];
    const plain = await run('npm', ['run', 'keys', '--', 'create', '--name', 'npm-plain'], { env });
    expect(plain.stdout).toMatch(/^vls_[A-Za-z0-9_-]{32}\n$/);
    const json = await run('npm', ['run', 'keys', '--', 'create', '--name', 'npm-json', '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'npm-json', key: expect.stringMatching(/^vls_/) });
  });

  it('creates with --json and limits, and lists without ever printing a key or its hash', async () => {
    const created = JSON.parse((await keys('create', '--name', 'bob', '--per-minute', '7', '--json')).stdout);
    expect(created).toMatchObject({ name: 'bob', status: 'active', perMinute: 7 });
    expect(created.id).toMatch(/^key_/);
    const list = (await keys('list', '--json')).stdout;
    expect(list).toContain(created.id);
    expect(list).not.toContain(created.key);
    expect(list).not.toMatch(/[0-9a-f]{64}/);
    const table = (await keys('list')).stdout;
    expect(table).toContain('bob');
    expect(table).not.toContain(created.key);
  });

  it.each([
    ['revoke', 'revoked'],
    ['deactivate', 'inactive'],
  ])('%s: the server refuses the key within a second', async (command) => {
    const created = JSON.parse((await keys('create', '--name', command, '--json')).stdout);
    expect(await statusWithin(created.key, 200)).toBe(200);
    expect((await keys(command, created.id)).code).toBe(0);
    expect(await statusWithin(created.key, 403)).toBe(403);
  });

  it('activates a deactivated key but never a revoked one', async () => {
    const a = JSON.parse((await keys('create', '--name', 'a', '--json')).stdout);
    await keys('deactivate', a.id);
    expect((await keys('activate', a.id)).code).toBe(0);
    expect(await statusWithin(a.key, 200)).toBe(200);
    const r = JSON.parse((await keys('create', '--name', 'r', '--json')).stdout);
    await keys('revoke', r.id);
    const again = await keys('activate', r.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/revocation is final/);
    const deactivated = await keys('deactivate', r.id);
    expect(deactivated.code).toBe(1);
    expect(deactivated.stderr).toMatch(/revocation is final/);
    expect(await statusWithin(r.key, 403)).toBe(403);
  });

  it('updates a key limits', async () => {
    const c = JSON.parse((await keys('create', '--name', 'u', '--json')).stdout);
    expect((await keys('update', c.id, '--per-day', '10')).code).toBe(0);
    const listed = JSON.parse((await keys('list', '--json')).stdout).find((k: any) => k.id === c.id);
    expect(listed.perDay).toBe(10);
  });

  it.each([
    [[], /no command given[\s\S]*usage:/],
    [['bogus'], /unknown command/],
    [['create'], /--name/],
    [['revoke'], /key ID/],
    [['create', '--name', 'x', '--per-minute', 'lots'], /whole number/],
    [['create', '--name', 'x', '--per-minute', '1000000001'], /--per-minute must be a whole number from 1 to 1e9/],
    [['create', '--name', 'x', '--per-day', '99999999999999999999999'], /--per-day must be a whole number from 1 to 1e12/],
    [['update', 'key_000000000000', '--per-month', '1000000000001'], /--per-month must be a whole number from 1 to 1e12/],
  ])('refuses %j with usage and exit 2', async (args, message) => {
    const res = await keys(...args);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
  });

  it.each([['--help'], ['help'], ['list', '--help']])('prints the usage on stdout and exits 0 for %j', async (...args) => {
    const res = await keys(...args);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^usage: npm run keys -- <command>/);
  });

  it('accepts the largest limits the server defaults accept', async () => {
    const res = await keys('create', '--name', 'max', '--per-minute', '1000000000', '--per-day', '1000000000000', '--json');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ perMinute: 1e9, perDay: 1e12 });
  });

  it('says in one line, without a stack trace, when the store cannot be opened', async () => {
    const { stdout, stderr, code } = await run(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', 'list'], {
      env: { ...process.env, DATA_DIR: '/dev/null/store' },
    }).then(
      (r) => ({ ...r, code: 0 }),
      (err: any) => ({ stdout: err.stdout, stderr: err.stderr, code: err.code }),
    );
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^keys: cannot open the key store: DATA_DIR: \/dev\/null\/store: a part of the path is not a directory$/)]);
  });

  it('exits 1 for an unknown id', async () => {
    expect((await keys('revoke', 'key_000000000000')).code).toBe(1);
  });
});
