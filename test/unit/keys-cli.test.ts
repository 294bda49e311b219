// The keys CLI, run as a real process against the store a running server uses.
// @module-tag slow (left out of make test-fast): starts processes, the keys CLI
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { runKeysCli } from '../support/server-process.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
let dataDir: string;
let h: Harness;

const keys = (...args: string[]) => runKeysCli(args, { dataDir });

/** The key's status once it is `want` (the server's key directory polls the store every 250 ms), else the last one. */
async function statusWithin(key: string, want: number): Promise<number> {
  let status = 0;
  await waitFor(async () => (status = (await h.call('/api/v1/bic/DEUTDEFF', { key })).status) === want, { intervalMs: 50, what: `status ${want}` }).catch(() => undefined);
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
describe('npm run keys', { timeout: 180_000 }, () => {
  it('creates a key that the running server accepts (at its next look at the store), and prints only the key', async () => {
    const { stdout, code } = await keys('create', '--name', 'alice');
    expect(code).toBe(0);
    const key = stdout.trim();
    expect(key).toMatch(/^vls_[A-Za-z0-9_-]{32}$/);
    expect(await statusWithin(key, 200)).toBe(200);
  });

  it('prints the key alone on stdout through `npm run keys` itself, as docs/keys-and-limits.md spells the command', async () => {
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
  ])('%s: the server refuses the key (at its next look at the store)', async (command) => {
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

  it('sets a key\'s daily SMTP verification quota with --smtp-per-day on create and update (0: none)', async () => {
    const c = JSON.parse((await keys('create', '--name', 's', '--smtp-per-day', '25', '--json')).stdout);
    expect(c.smtpPerDay).toBe(25);
    expect((await keys('update', c.id, '--smtp-per-day', '0')).code).toBe(0);
    const listed = JSON.parse((await keys('list', '--json')).stdout).find((k: any) => k.id === c.id);
    expect(listed).toMatchObject({ smtpPerDay: 0, perDay: null });
    const table = (await keys('list')).stdout.split('\n');
    expect(table[0].split('\t')).toContain('SMTP_PER_DAY');
    expect(table.find((l) => l.startsWith(c.id))!.split('\t')[6]).toBe('0');
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
    [['create', '--name', 'x', '--smtp-per-day', '1000000001'], /--smtp-per-day must be a whole number from 0 to 1e9/],
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
    const { stdout, stderr, code } = await runKeysCli(['list'], { dataDir: '/dev/null/store' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^keys: cannot open the key store: DATA_DIR: \/dev\/null\/store: a part of the path is not a directory$/)]);
  });

  describe('import FILE', () => {
    const file = (name: string, lines: string[]) => {
      const path = join(dataDir, name);
      writeFileSync(path, lines.join('\n'));
      return path;
    };
    const listed = async () => JSON.parse((await keys('list', '--json')).stdout) as Array<{ name: string; perMinute: number | null; perDay: number | null; perMonth: number | null }>;

    it('creates every key of the JSON lines, prints each key once in order, and the server accepts them', async () => {
      const path = file('people.jsonl', [
        '{"name": "imp-one"}',
        '',
        '{"name": "imp-two", "perMinute": 5, "perDay": 100, "perMonth": 1000}',
        '{"name": "imp-three", "perDay": null}\r',
      ]);
      const res = await keys('import', path);
      expect([res.code, res.stderr]).toEqual([0, '']);
      const printed = res.stdout.trim().split('\n');
      expect(printed).toHaveLength(3);
      for (const key of printed) expect(key).toMatch(/^vls_[A-Za-z0-9_-]{32}$/);
      expect(new Set(printed).size).toBe(3);
      for (const key of printed) expect(await statusWithin(key, 200)).toBe(200);
      const byName = new Map((await listed()).map((k) => [k.name, k]));
      expect(byName.get('imp-two')).toMatchObject({ perMinute: 5, perDay: 100, perMonth: 1000 });
      expect(byName.get('imp-three')).toMatchObject({ perMinute: null, perDay: null, perMonth: null });
      expect(byName.has('imp-one')).toBe(true);
    });

    it('with --json prints one JSON object per created key (id, name, limits, key) and lists never show the keys', async () => {
      const res = await keys('import', file('json.jsonl', ['{"name": "imp-json-a", "perDay": 7}', '{"name": "imp-json-b"}']), '--json');
      expect(res.code).toBe(0);
      const rows = res.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(rows).toEqual([
        expect.objectContaining({ name: 'imp-json-a', perDay: 7, status: 'active', id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^vls_/) }),
        expect.objectContaining({ name: 'imp-json-b', perDay: null, key: expect.stringMatching(/^vls_/) }),
      ]);
      const list = (await keys('list', '--json')).stdout;
      for (const row of rows) expect(list).not.toContain(row.key);
    });

    it.each([
      [['{"name": "bad-a"}', '{"name": "bad-b"}', '{"name": "bad-c", "perDay": 0}'], /line 3: perDay must be a whole number from 1 to 1e12/],
      [['{"name": "bad-d"}', '{"name": "bad-e",}'], /line 2: not valid JSON/],
      [['{"name": "bad-f"}', '', '["bad-g"]'], /line 3: must be a JSON object/],
      [['{"name": ""}'], /line 1: name must be a non-empty string/],
      [['{"name": "bad-h", "perminute": 5}'], /line 1: unknown field "perminute"/],
      [['{"name": "bad-i", "perMinute": 1000000001}'], /line 1: perMinute must be a whole number from 1 to 1e9/],
    ])('a bad line (%j) is named with its number and nothing is created', async (lines, message) => {
      const before = (await listed()).length;
      const res = await keys('import', file('bad.jsonl', lines));
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(message);
      expect(res.stderr).toMatch(/nothing imported/);
      const after = await listed();
      expect(after.length).toBe(before);
      expect(after.some((k) => k.name.startsWith('bad-'))).toBe(false);
    });

    it('refuses a missing FILE argument (usage, exit 2), an absent file and an empty one (exit 1)', async () => {
      expect(await keys('import')).toMatchObject({ code: 2, stderr: expect.stringMatching(/import needs a FILE/) });
      expect(await keys('import', join(dataDir, 'absent.jsonl'))).toMatchObject({ code: 1, stderr: expect.stringMatching(/absent\.jsonl: no such file/) });
      expect(await keys('import', file('empty.jsonl', ['', '  ']))).toMatchObject({ code: 1, stderr: expect.stringMatching(/no key to import/) });
      expect(await keys('import', file('named.jsonl', ['{"name": "x"}']), '--per-day', '5')).toMatchObject({ code: 2 });
    });
  });

  it('exits 1 for an unknown id', async () => {
    expect((await keys('revoke', 'key_000000000000')).code).toBe(1);
  });
});
