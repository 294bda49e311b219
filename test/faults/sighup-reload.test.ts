// SIGHUP on the real server process: under a steady load every request is answered while the datasets are reloaded,
// a corrupt file keeps the data in use, and with WORKERS=2 the primary's signal reloads every worker.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GEOIP_TEST_DIR } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { waitFor } from '../support/wait.js';

let dir: string;
let hostingFile: string;
let torFile: string;
let server: ServerProcess | null = null;

const HOSTING = '# date: 2026-01-05\ncidr,provider\n3.5.140.0/22,Amazon Web Services\n';
const TOR = '# date: 2026-01-05\n185.220.101.1\n';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vls-sighup-'));
  hostingFile = join(dir, 'hosting.csv');
  torFile = join(dir, 'tor.txt');
});
afterEach(async () => {
  await server?.stop();
  server = null;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** src/main.ts on 127.0.0.1:0 with the test GeoIP databases and the lists above; its URL, first key and output. */
async function start(env: Record<string, string> = {}): Promise<{ url: string; key: string; out: () => string }> {
  writeFileSync(hostingFile, HOSTING);
  writeFileSync(torFile, TOR);
  server = await startServerProcess({
    env: {
      RATE_LIMIT_PER_MINUTE: '1000000',
      QUOTA_PER_DAY: '10000000',
      QUOTA_PER_MONTH: '100000000',
      GEOIP_CITY_DB: join(GEOIP_TEST_DIR, 'GeoIP2-City-Test.mmdb'),
      GEOIP_ASN_DB: join(GEOIP_TEST_DIR, 'GeoLite2-ASN-Test.mmdb'),
      HOSTING_RANGES_FILE: hostingFile,
      TOR_EXIT_FILE: torFile,
      // The reload's own lines are info; request lines are not needed.
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  const key = /^\s+(vls_\S+)$/m.exec(server.output())?.[1];
  if (!key) throw new Error(`no first key printed:\n${server.output()}`);
  return { url: server.url, key, out: () => server!.output() };
}

const reloadLines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.includes('"datasets reloaded"'))
    .map((l) => JSON.parse(l) as { pid: number; reloaded: string[]; failed: string[] });

describe('SIGHUP', () => {
  it('reloads under load with no failed request; a corrupt file keeps the data in use', { timeout: 180_000 }, async () => {
    const { url, key, out } = await start();
    const headers = { 'X-Api-Key': key };
    const outcomes: { path: string; status: number; error: string | null; isTor?: boolean | null; provider?: string | null }[] = [];
    let loading = true;
    const paths = ['/api/v1/ip/81.2.69.142', '/api/v1/ip/3.5.140.1', '/api/v1/iban/DE89370400440532013000', '/api/v1/bic/DEUTDEFF'];
    const client = async (i: number) => {
      for (let n = i; loading; n++) {
        const path = paths[n % paths.length];
        try {
          const res = await fetch(url + path, { headers });
          const body = (await res.json()) as { security?: { isTor: boolean | null; hostingProvider: string | null } };
          outcomes.push({ path, status: res.status, error: null, isTor: body.security?.isTor, provider: body.security?.hostingProvider });
        } catch (err) {
          outcomes.push({ path, status: 0, error: String(err) });
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, i) => client(i));
    const answered = (pred: (o: (typeof outcomes)[number]) => boolean) => outcomes.some(pred);
    try {
      await waitFor(() => outcomes.length >= 50, { timeoutMs: 30_000, what: 'the load to start' });

      // 1. New lists: 81.2.69.142 becomes a Tor exit in a provider's range.
      writeFileSync(torFile, '# date: 2026-02-02\n185.220.101.1\n81.2.69.142\n');
      writeFileSync(hostingFile, `${HOSTING}81.2.69.0/24,Example Cloud\n`);
      const mark = outcomes.length;
      server!.child.kill('SIGHUP');
      await waitFor(() => outcomes.slice(mark).some((o) => o.path === paths[0] && o.isTor === true && o.provider === 'Example Cloud'), { timeoutMs: 30_000, what: 'the new lists to answer' });
      await waitFor(() => reloadLines(out()).length === 1, { timeoutMs: 30_000, what: 'the reload line' });
      expect(reloadLines(out())[0]).toMatchObject({ failed: [] });

      // 2. A corrupt hosting file: one error line naming it, the old table still answers.
      writeFileSync(hostingFile, 'cidr,provider\n<html>\n');
      server!.child.kill('SIGHUP');
      await waitFor(() => reloadLines(out()).length === 2, { timeoutMs: 30_000, what: 'the second reload' });
      expect(reloadLines(out())[1].failed).toEqual(['ip-hosting']);
      expect(out().split('\n').filter((l) => l.includes(`reload of ${hostingFile} failed`))).toHaveLength(1);
      const after = outcomes.length;
      await waitFor(() => outcomes.slice(after).filter((o) => o.path === paths[0]).length >= 3, { timeoutMs: 30_000, what: 'answers after the failed reload' });
      expect(outcomes.slice(after).filter((o) => o.path === paths[0]).every((o) => o.provider === 'Example Cloud' && o.isTor === true)).toBe(true);

      // 3. Signals in a row: the kernel may merge pending ones into one delivery; what arrives while a reload runs is
      // one more pass after it. None ends the process.
      server!.child.kill('SIGHUP');
      server!.child.kill('SIGHUP');
      server!.child.kill('SIGHUP');
      await waitFor(() => reloadLines(out()).length >= 3, { timeoutMs: 60_000, what: 'the reloads the signals asked for' });
      expect(server!.child.exitCode).toBeNull();
    } finally {
      loading = false;
      await Promise.all(clients);
    }
    const failed = outcomes.filter((o) => o.error !== null || o.status !== 200);
    expect(failed).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(100);
    expect(answered((o) => o.path === paths[1] && o.provider === 'Amazon Web Services')).toBe(true);
  });

  it('with WORKERS=2, the primary passes it on and every worker reloads and answers from the new list', { timeout: 180_000 }, async () => {
    const { url, key, out } = await start({ WORKERS: '2' });
    await waitFor(() => /with 2 workers/.test(out()), { timeoutMs: 60_000, what: 'both workers' });
    writeFileSync(torFile, '# date: 2026-02-02\n81.2.69.142\n');
    server!.child.kill('SIGHUP');
    await waitFor(() => new Set(reloadLines(out()).map((l) => l.pid)).size === 2, { timeoutMs: 60_000, what: `a reload line from each worker:\n${out()}` });
    expect(reloadLines(out()).every((l) => l.failed.length === 0)).toBe(true);

    // Telling the workers apart from outside: one more SIGHUP to the first worker alone makes its reload count 2, the
    // other's stays 1; each /metrics scrape then says which worker answered it and how many IP lookups it served.
    const [first] = [...new Set(reloadLines(out()).map((l) => l.pid))];
    process.kill(first, 'SIGHUP');
    await waitFor(() => reloadLines(out()).filter((l) => l.pid === first).length === 2, { timeoutMs: 30_000, what: 'the first worker\'s second reload' });
    const scrape = async () => {
      const text = await (await fetch(`${url}/metrics`, { headers: { Connection: 'close' } })).text();
      const reloads = Number(/^dataset_reloads_total\{dataset="ip-tor-exits"\} (\d+)$/m.exec(text)?.[1]);
      const lookups = Number(/^http_requests_total\{(?=[^}]*operationId="lookupIp")(?=[^}]*status="200")[^}]*\} (\d+)$/m.exec(text)?.[1] ?? 0);
      return { worker: reloads === 2 ? 'first' : 'second', lookups };
    };

    // Fresh connections go to the workers in turn: every answer comes from the new list...
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${url}/api/v1/ip/81.2.69.142`, { headers: { 'X-Api-Key': key, Connection: 'close' } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { security: { isTor: boolean } }).security.isTor).toBe(true);
    }
    // ...and each worker served some of them (its /metrics counts them; a render may lag up to a second).
    const served = new Map<string, number>();
    await waitFor(
      async () => {
        const { worker, lookups } = await scrape();
        served.set(worker, lookups);
        return served.size === 2 && [...served.values()].reduce((a, b) => a + b, 0) === 12;
      },
      { timeoutMs: 30_000, what: 'both workers\' counts of the lookups' },
    );
    expect(served.get('first')).toBeGreaterThan(0);
    expect(served.get('second')).toBeGreaterThan(0);
    expect(server!.child.exitCode).toBeNull();
  });
});
