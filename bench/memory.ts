// Memory (issue #58 item 3): the built service's RSS after start and after password requests, unpinned, with the
// default thread count; then each dataset loaded alone in a fresh Node process (RSS and heap growth it causes).
// `node --import tsx bench/memory.ts` (dist/ built, GeoLite2 in var/geoip: make geoip). MEMORY_PASSWORDS (400).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BREACHED, endpoint, requestsFor } from './endpoints.js';
import { startFixtures } from './fixtures.js';
import { runLoad } from './load.js';
import { processTree, ROOT, rssMb, startWithKey, statusField, waitIdle } from './processes.js';
import { geoDatabases, serviceEnv } from './service-env.js';
import { NODE_START_ENV, NODE_START_FLAGS } from '../src/heap-tuning.js';

const treeRssMb = (pid: number): number => processTree(pid).reduce((s, p) => s + rssMb(p), 0);

/** A module of the build (dist/src), untyped: the bench measures the build the service runs. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const dist = (path: string): Promise<any> => import(new URL(`../dist/src/${path}`, import.meta.url).href);

// ---- one dataset alone: run in a child (`memory.ts --dataset NAME`), RSS and heap before and after, after a full GC
/** The City file the service reads by default from var/geoip: the slim one when it is no older than its source. */
function defaultCityDb(): string {
  const at = (f: string) => join(ROOT, 'var/geoip', f);
  const modified = (f: string) => (existsSync(at(f)) ? statSync(at(f)).mtimeMs : null);
  const source = fullCityDb();
  return (modified('GeoLite2-City.slim.mmdb') ?? -1) >= (modified(basename(source)) ?? Infinity) ? at('GeoLite2-City.slim.mmdb') : source;
}
/** The City file the slim one derives from: the newer one when fetched. */
function fullCityDb(): string {
  const latest = join(ROOT, 'var/geoip/GeoLite2-City.latest.mmdb');
  return existsSync(latest) ? latest : join(ROOT, 'var/geoip/GeoLite2-City.mmdb');
}
const geoip = (cityDb: string) => async () => (await dist('adapters/geoip/geoip-reader.js')).openGeoIp({ cityDb, asnDb: geoDatabases().asn });

const DATASETS: Record<string, () => Promise<unknown>> = {
  'GeoLite2 City + ASN, the full City file (read into one buffer each)': geoip(fullCityDb()),
  'GeoLite2 City + ASN, the slim City file the service reads': geoip(defaultCityDb()),
  'zxcvbn dictionaries, one worker thread (pool)': async () => {
    const { createStrengthEstimator } = await dist('adapters/password/pool.js');
    const pool = createStrengthEstimator({ threads: 1 });
    await pool.estimate('warm-up Tr0ub4dor&3');
    return pool;
  },
  'e-mail lists (disposable, free, role)': async () => (await dist('adapters/mail/email-lists.js')).loadEmailLists(),
  'BIN table (data/bin)': async () => (await dist('adapters/bank-data/bin-table.js')).loadBinTable(join(ROOT, 'data/bin/ranges.csv')),
  'bank directory (data/banks)': async () => (await dist('adapters/bank-data/bank-directory.js')).loadBankDirectory(join(ROOT, 'data/banks')),
};

async function measureDataset(name: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  await settle();
  const [r0, h0] = [process.memoryUsage.rss(), process.memoryUsage()];
  const kept = await DATASETS[name]();
  await settle();
  const [r1, h1] = [process.memoryUsage.rss(), process.memoryUsage()];
  const mb = (b: number) => Math.round(b / 2 ** 20);
  process.stdout.write(JSON.stringify({ name, rss: mb(r1 - r0), heap: mb(h1.heapUsed - h0.heapUsed), external: mb(h1.external - h0.external), kept: kept !== undefined }));
  process.exit(0);
}

const at = process.argv.indexOf('--dataset');
if (at > 0) await measureDataset(process.argv[at + 1]);

// ---- the service: unpinned (its default thread count is the host's), idle after start, then after password requests
process.env.BENCH_PIN = '0';
const dir = mkdtempSync(join(tmpdir(), 'vls-memory-'));
const fixtures = await startFixtures(BREACHED);
// The City file as the service picks it in DATA_DIR/geoip (the bench's DATA_DIR is a temporary one); node flags and malloc
// settings as every start command sets them (MEMORY_ARENAS=default: glibc's own, empty; MEMORY_FLAGS=none: no flags).
const malloc = process.env.MEMORY_ARENAS === 'default' ? Object.fromEntries(Object.keys(NODE_START_ENV).map((k) => [k, ''])) : NODE_START_ENV;
const env: Record<string, string> = { ...serviceEnv(fixtures, mkdtempSync(join(dir, 'data-')), geoDatabases()), ...(geoDatabases().real ? { GEOIP_CITY_DB: defaultCityDb() } : {}), ...malloc };
const svc = await startWithKey({ name: 'service', env, dir, nodeArgs: process.env.MEMORY_FLAGS === 'none' ? [] : [...NODE_START_FLAGS] });
const lines: string[] = [];
try {
  await waitIdle(svc.pid, 30);
  await new Promise((r) => setTimeout(r, 2000));
  const idle = treeRssMb(svc.pid);
  const before = statusField(svc.pid, 'Threads');
  const passwords = Number(process.env.MEMORY_PASSWORDS ?? 400);
  const pw = requestsFor(endpoint('password'), svc.key);
  const m = await runLoad({ url: svc.url, requests: pw, connections: 8, durationS: Math.max(1, passwords / 100), loader: 'autocannon' });
  await waitIdle(svc.pid, 30);
  const after = treeRssMb(svc.pid);
  // V8's memory reducer returns the young generation after a quiet spell of several seconds: the figure then too.
  await new Promise((r) => setTimeout(r, 12_000));
  const later = treeRssMb(svc.pid);
  lines.push(
    `service (node ${process.version}, GeoIP ${geoDatabases().real ? basename(env.GEOIP_CITY_DB ?? '') : 'TEST databases'}, ${Object.keys(NODE_START_ENV).map((k) => `${k} ${env[k] || 'unset'}`).join(', ')}, flags ${process.env.MEMORY_FLAGS === 'none' ? 'none' : NODE_START_FLAGS.join(' ')}): ${idle.toFixed(0)} MB RSS idle after start (${before} threads); ` +
      `${after.toFixed(0)} MB after ${m.responses} password requests, ${later.toFixed(0)} MB 12 s later (${statusField(svc.pid, 'Threads')} threads; targets <= 180 and <= 220 MB)`,
  );
} finally {
  await svc.stop();
  await fixtures.close();
  rmSync(dir, { recursive: true, force: true });
}
lines.push('', '| dataset, loaded alone in a fresh process | RSS MB | JS heap MB | buffers MB |', '|---|---:|---:|---:|');
for (const name of Object.keys(DATASETS)) {
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', import.meta.filename, '--dataset', name], { cwd: ROOT, encoding: 'utf8' });
  const d = r.status === 0 ? (JSON.parse(r.stdout) as { rss: number; heap: number; external: number }) : null;
  lines.push(d ? `| ${name} | ${d.rss} | ${d.heap} | ${d.external} |` : `| ${name} | failed: ${r.stderr.split('\n').slice(-3).join(' ')} | | |`);
}
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(0);
