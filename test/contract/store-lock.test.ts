// The embedded store never stalls the service (issue #41): a second process holds SQLite's write lock (BEGIN
// IMMEDIATE) or imports 100,000 keys while the service serves. Requests keep being answered while the lock is held,
// the counts made meanwhile reach the database once it is free (none lost, none twice), a long lock is told (one
// warning, /readyz degraded, a gauge), and a restart hands out no fresh quota. No latency is asserted: only that
// answers arrived while the other process held the lock.
// @module-tag slow (left out of make test-fast): starts processes
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/adapters/keys/key-store.js';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { createSqliteCounters } from '../../src/adapters/limits/sqlite-counters.js';
import { createLimiter } from '../../src/accounts/limiter.js';
import type { ComposeOptions } from '../../src/compose.js';
import { startHarness, type Harness } from '../support/harness.js';
import { testKeyRecord } from '../support/key-records.js';
import { waitFor } from '../support/wait.js';
import { cleanupAfterEach } from '../support/cleanups.js';

const cleanups = cleanupAfterEach();
const tempDir = () => cleanups.tempDir('vls-lock-');

async function harness(dataDir: string, env: Record<string, string> = {}, opts: ComposeOptions = {}): Promise<Harness> {
  const h = await startHarness({ DATA_DIR: dataDir, LOG_LEVEL: 'info', QUOTA_PER_DAY: '1000000000', QUOTA_PER_MONTH: '1000000000', ...env }, opts);
  let closed = false;
  const close = h.close.bind(h);
  h.close = async () => {
    if (!closed) await close();
    closed = true;
  };
  cleanups.push(() => h.close());
  return h;
}

/** Another process (node + better-sqlite3, as another program would) holding the write lock until told to let go. */
async function holdWriteLock(dataDir: string): Promise<{ release(): Promise<void> }> {
  const code = `
    import Database from 'better-sqlite3';
    import { createInterface } from 'node:readline';
    const db = new Database(process.argv[1]);
    db.pragma('busy_timeout = 10000');
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    createInterface({ input: process.stdin }).once('line', () => {
      db.exec('COMMIT');
      db.close();
      process.stdout.write('released\\n');
    });`;
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', code, join(dataDir, 'service.db')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const said = (word: string) =>
    new Promise<void>((resolve, reject) => {
      lines.on('line', (l) => l === word && resolve());
      child.once('exit', (c) => reject(new Error(`lock holder exited ${c} before "${word}"`)));
    });
  cleanups.push(() => void child.kill());
  await said('locked');
  return {
    async release() {
      const done = said('released');
      child.stdin!.end('release\n');
      await done;
    },
  };
}

/** The key's day and month counters as the database holds them (another connection, read only). */
function storedCounts(dataDir: string, keyId: string): { day: number; month: number } {
  const db = new Database(join(dataDir, 'service.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT counter_key AS k, count FROM usage_counters WHERE counter_key LIKE ?').all(`{${keyId}}:%`) as Array<{ k: string; count: number }>;
    const of = (re: RegExp) => rows.find((r) => re.test(r.k))?.count ?? 0;
    return { day: of(/:d:\d{4}-\d\d-\d\d$/), month: of(/:m:\d{4}-\d\d$/) };
  } finally {
    db.close();
  }
}

function keyIdOf(dataDir: string, key: string): string {
  const db = new Database(join(dataDir, 'service.db'), { readonly: true });
  try {
    return db.prepare('SELECT id FROM api_keys WHERE key_hash = ?').pluck().get(hashKey(key)) as string;
  } finally {
    db.close();
  }
}

const gauge = async (h: Harness): Promise<number> => {
  const text = await (await h.fetch(`/metrics`)).text();
  const m = /^store_last_write_age_seconds\{store="sqlite"\} (\S+)$/m.exec(text);
  return m ? Number(m[1]) : NaN;
};
const readyz = async (h: Harness) => {
  const res = await h.fetch(`/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; degraded?: Record<string, string> } };
};
const warnings = (h: Harness) => h.logs.filter((l) => l.includes('usage counters not written for'));
const recoveries = (h: Harness) => h.logs.filter((l) => l.includes('usage counters written again'));

/** Sends requests one after the other with the harness key (`everyMs` apart, when given); `answered` counts the 200s. */
function steadyLoad(h: Harness, everyMs = 0) {
  let stop = false;
  const state = { answered: 0, other: 0 };
  const running = (async () => {
    while (!stop) {
      const res = await h.call('/api/v1/bic/DEUTDEFF').catch(() => null);
      if (res?.status === 200) state.answered++;
      else state.other++;
      if (res === null) stop = true; // the server is gone (a failed test closed it)
      if (everyMs > 0) await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  cleanups.push(() => {
    stop = true;
    return running;
  });
  return {
    state,
    async stop() {
      stop = true;
      await running;
      return state;
    },
  };
}

describe('another process holds the write lock', { timeout: 120_000 }, () => {
  it('a short lock: requests are answered meanwhile, and the counts made then are written once it is free', async () => {
    const dataDir = tempDir();
    // Flushes every 50 ms; the degraded threshold far away: a lock this short is not told.
    const h = await harness(dataDir, {}, { store: { flushMs: 50, maxRetryMs: 100, degradedAfterMs: 60_000 } });
    const keyId = keyIdOf(dataDir, h.key);
    for (let i = 0; i < 5; i++) expect((await h.call('/api/v1/bic/DEUTDEFF')).status).toBe(200);
    await waitFor(() => storedCounts(dataDir, keyId).day === 5, { intervalMs: 20, what: 'the first counts written' });
    const unseen = await h.createKey('first used under the lock');

    const lock = await holdWriteLock(dataDir);
    const load = steadyLoad(h);
    const atLock = load.state.answered;
    // Held until the service has failed to write for a while (the gauge's age grows) while answering.
    await waitFor(async () => (await gauge(h)) >= 0.5 && load.state.answered - atLock >= 20, { intervalMs: 20, what: 'writes failing while requests are answered' });
    const answeredWhileLocked = load.state.answered - atLock;
    expect(storedCounts(dataDir, keyId).day).toBe(5); // nothing of it written yet
    // Reads do not wait for the lock: a key never presented before is looked up in the store, the feed is read.
    expect((await h.call('/api/v1/bic/DEUTDEFF', { key: unseen.key })).status).toBe(200);
    expect(await readyz(h)).toMatchObject({ status: 200, body: { checks: { keys: true, limits: true } } });
    await lock.release();
    const { answered, other } = await load.stop();

    expect(other).toBe(0);
    expect(answeredWhileLocked).toBeGreaterThanOrEqual(20);
    const total = 5 + answered;
    await waitFor(() => storedCounts(dataDir, keyId).day === total, { intervalMs: 20, what: 'the counts written after the lock' });
    expect(storedCounts(dataDir, keyId)).toEqual({ day: total, month: total });
    expect(warnings(h)).toEqual([]);
  });

  it('a long lock: told once (warning, /readyz degraded, gauge), still answering; the counts are written after it, exactly; a restart gives no fresh quota', async () => {
    const dataDir = tempDir();
    // A lock past the degraded threshold, made short: the threshold is 300 ms here (5 s by default).
    const h = await harness(dataDir, {}, { store: { flushMs: 50, maxRetryMs: 100, degradedAfterMs: 300 } });
    const keyId = keyIdOf(dataDir, h.key);
    expect((await h.call('/api/v1/bic/DEUTDEFF')).status).toBe(200);
    await waitFor(() => storedCounts(dataDir, keyId).day === 1, { intervalMs: 20, what: 'the first count written' });

    const lock = await holdWriteLock(dataDir);
    const load = steadyLoad(h);
    const ready = await waitFor(
      async () => {
        const r = await readyz(h);
        return r.body.degraded ? r : undefined;
      },
      { intervalMs: 20, what: '/readyz degraded' },
    );
    expect(ready.status).toBe(200); // still ready: counting goes on in memory
    expect(ready.body.status).toBe('ready');
    expect(ready.body.degraded?.store).toMatch(/usage counters not written for \d+ s/);
    const atDegraded = load.state.answered;
    // Failing on: several more attempts after the warning (the retries back off to 100 ms here), still answering.
    await waitFor(async () => (await gauge(h)) >= 1.5 && load.state.answered - atDegraded >= 20, { intervalMs: 20, what: 'more failed writes, more answers' });
    expect(warnings(h)).toHaveLength(1);
    expect(recoveries(h)).toHaveLength(0);
    expect(storedCounts(dataDir, keyId).day).toBe(1);
    await lock.release();
    const { answered, other } = await load.stop();
    expect(other).toBe(0);
    expect(answered - atDegraded).toBeGreaterThanOrEqual(20);

    const total = 1 + answered;
    await waitFor(() => storedCounts(dataDir, keyId).day === total, { intervalMs: 20, what: 'the counts written after the lock' });
    expect(storedCounts(dataDir, keyId)).toEqual({ day: total, month: total });
    await waitFor(async () => (await readyz(h)).body.degraded === undefined, { intervalMs: 20, what: '/readyz no longer degraded' });
    expect(await gauge(h)).toBeLessThan(1);
    expect(warnings(h)).toHaveLength(1);
    expect(recoveries(h)).toHaveLength(1);

    // A restart on the same DATA_DIR, its quotas exactly what was counted: the key has nothing left today or this month.
    await h.close();
    const again = await harness(dataDir, { QUOTA_PER_DAY: String(total), QUOTA_PER_MONTH: String(total + 1000) });
    const usage = await again.call('/api/v1/usage', { key: h.key });
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({ day: { used: total, remaining: 0 }, month: { used: total } });
    const refused = await again.call('/api/v1/bic/DEUTDEFF', { key: h.key });
    expect([refused.status, refused.body.code]).toEqual([429, 'DAILY_QUOTA_EXCEEDED']);
  });

  it('close (the SIGTERM drain) while the lock is held: keeps trying without blocking, and writes the last counts once it is let go', async () => {
    const dataDir = tempDir();
    const db = openDatabase(dataDir);
    cleanups.push(() => void (db.open && db.close()));
    const counters = createSqliteCounters({ db, flushMs: 50, maxRetryMs: 100, closeTimeoutMs: 60_000 });
    const limiter = createLimiter({ defaults: { perMinute: 1000, perDay: 1000, perMonth: 1000 }, counters });
    const key = testKeyRecord();
    const lock = await holdWriteLock(dataDir);
    for (let i = 0; i < 7; i++) await limiter.consume(key);
    let closed = false;
    const closing = limiter.close().then(() => (closed = true));
    await waitFor(() => counters.writeStatus().failingForSeconds !== null, { intervalMs: 20, what: 'a write failed against the lock' });
    expect(closed).toBe(false);
    await lock.release();
    await closing;
    expect(storedCounts(dataDir, key.id)).toEqual({ day: 7, month: 7 });
  });

  it('close gives up after closeTimeoutMs while the lock is still held, saying how many counters were not written', async () => {
    const dataDir = tempDir();
    const db = openDatabase(dataDir);
    cleanups.push(() => void (db.open && db.close()));
    const lines: string[] = [];
    const logger = { warn: (_: object, m?: string) => void lines.push(`warn ${m}`), error: (o: object, m?: string) => void lines.push(`error ${m} ${JSON.stringify(o)}`) };
    const counters = createSqliteCounters({ db, flushMs: 50, closeTimeoutMs: 200, logger });
    const limiter = createLimiter({ defaults: { perMinute: 1000, perDay: 1000, perMonth: 1000 }, counters });
    const lock = await holdWriteLock(dataDir);
    await limiter.consume(testKeyRecord());
    await limiter.close();
    await lock.release();
    expect(lines.filter((l) => l.startsWith('error'))).toEqual([expect.stringMatching(/not written at shutdown.*"counters":2/)]);
  });
});

describe('keys import of 100,000 keys while the service serves', { timeout: 300_000 }, () => {
  it('is written in batches: requests are answered meanwhile, progress is reported, every key is printed once and usable', async () => {
    const dataDir = tempDir();
    const h = await harness(dataDir, {}, { store: { flushMs: 50 } });
    const keyId = keyIdOf(dataDir, h.key);
    const file = join(dataDir, 'many.jsonl');
    const N = 100_000;
    writeFileSync(file, Array.from({ length: N }, (_, i) => JSON.stringify({ name: `imported-${i}` })).join('\n'));

    // Paced: on two shared cores an unpaced loop in this process would take the CPU the import needs.
    const load = steadyLoad(h, 5);
    const cli = spawn(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', 'import', file], { env: { ...process.env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let answeredAtFirstProgress: number | null = null;
    cli.stdout!.on('data', (d) => (stdout += d));
    cli.stderr!.on('data', (d) => {
      stderr += d;
      answeredAtFirstProgress ??= load.state.answered;
    });
    const code = await new Promise<number | null>((r) => cli.once('exit', r));
    const answeredAtExit = load.state.answered;
    const { answered, other } = await load.stop();

    expect([code, other]).toEqual([0, 0]);
    const keys = stdout.trim().split('\n');
    expect(keys).toHaveLength(N);
    expect(new Set(keys).size).toBe(N);
    const progress = stderr.trim().split('\n');
    expect(progress.at(-1)).toBe(`imported ${N} of ${N} keys`);
    for (const line of progress) expect(line).toMatch(/^imported \d+ of 100000 keys$/);
    // Answers arrived between the import's first progress line (a batch written) and its end.
    expect(answeredAtFirstProgress).not.toBeNull();
    expect(answeredAtExit).toBeGreaterThan(answeredAtFirstProgress!);

    for (const key of [keys[0], keys[N - 1]]) {
      await waitFor(async () => (await h.call('/api/v1/bic/DEUTDEFF', { key })).status === 200, { intervalMs: 20, what: 'an imported key usable' });
    }
    // The feed was pruned as the import went: the newest 10,000 changes.
    const db = new Database(join(dataDir, 'service.db'), { readonly: true });
    cleanups.push(() => void db.close());
    expect(db.prepare('SELECT COUNT(*) FROM api_keys').pluck().get()).toBe(N + 1);
    expect(db.prepare('SELECT COUNT(*) FROM api_key_changes').pluck().get()).toBeLessThanOrEqual(10_000);
    await waitFor(() => storedCounts(dataDir, keyId).day === answered, { intervalMs: 20, what: 'the counts written' });
  });
});
