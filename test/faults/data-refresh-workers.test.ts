// DATA_REFRESH=on with WORKERS=2 on the real server process: the primary downloads each list once (not once per
// worker) from a local publisher and every worker swaps it in and answers from it; the workers count the refresh.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL_LIST_FILES } from '../../src/adapters/mail/email-lists.js';
import { GEOIP_TEST_DIR } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { waitFor } from '../support/wait.js';

const served: string[] = [];
const LISTS: Record<string, string> = {
  '/tor': '185.220.101.1\n81.2.69.142\n',
  '/aws': '3.5.140.0/22\n81.2.69.0/24\n',
  '/disposable': readFileSync(EMAIL_LIST_FILES.disposable, 'utf8'),
};
let publisher: Server;
let server: ServerProcess | null = null;
/** The lists in use before the refresh: as small as the new ones (a list that shrank by half would be refused). */
const dir = mkdtempSync(join(tmpdir(), 'vls-refresh-workers-'));
const shipped = { HOSTING_RANGES_FILE: join(dir, 'hosting.csv'), TOR_EXIT_FILE: join(dir, 'tor.txt') };
writeFileSync(shipped.HOSTING_RANGES_FILE, '# date: 2026-01-05\n3.5.140.0/22,Amazon Web Services\n');
writeFileSync(shipped.TOR_EXIT_FILE, '# date: 2026-01-05\n185.220.101.1\n');

beforeAll(async () => {
  publisher = createServer((req, res) => {
    served.push(req.url ?? '');
    const body = LISTS[req.url ?? ''];
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'last-modified': 'Sat, 28 Nov 2026 09:00:00 GMT' }).end(body);
  });
  await new Promise<void>((r) => publisher.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await server?.stop();
  await new Promise<void>((r) => publisher.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('DATA_REFRESH with WORKERS=2', () => {
  it('the primary downloads once; each worker swaps the lists in and answers from them', { timeout: 180_000 }, async () => {
    const base = `http://127.0.0.1:${(publisher.address() as AddressInfo).port}`;
    const none = { GOOGLE_CLOUD_RANGES_URL: '', AZURE_RANGES_URL: '', ORACLE_RANGES_URL: '', CLOUDFLARE_RANGES_URL: '', DIGITALOCEAN_RANGES_URL: '' };
    server = await startServerProcess({
      env: {
        WORKERS: '2',
        DATA_REFRESH: 'on',
        ALLOW_PRIVATE_TARGETS: 'true',
        TOR_EXITS_URL: `${base}/tor`,
        AWS_RANGES_URL: `${base}/aws`,
        DISPOSABLE_DOMAINS_URL: `${base}/disposable`,
        HOSTING_ASN_URL: `${base}/none`,
        ...none,
        ...shipped,
        GEOIP_CITY_DB: join(GEOIP_TEST_DIR, 'GeoIP2-City-Test.mmdb'),
        GEOIP_ASN_DB: join(GEOIP_TEST_DIR, 'GeoLite2-ASN-Test.mmdb'),
        RATE_LIMITS: 'off',
        LOG_LEVEL: 'info',
      },
    });
    const key = /^\s+(vls_\S+)$/m.exec(server.output())?.[1];
    expect(key).toBeDefined();
    const ask = async () => {
      const res = await fetch(`${server!.url}/api/v1/ip/81.2.69.142`, { headers: { 'X-Api-Key': key!, Connection: 'close' } });
      const body = (await res.json()) as { security?: { isTor: boolean | null; hostingProvider: string | null } };
      if (!body.security) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}\n${server!.output()}`);
      return body.security;
    };
    // The first downloads start 5 s after the start; then every fresh connection (the workers in turn) answers anew.
    await waitFor(async () => (await ask()).isTor === true, { timeoutMs: 90_000, what: `the refreshed Tor list:\n${server.output()}` });
    await waitFor(async () => (await Promise.all(Array.from({ length: 6 }, ask))).every((s) => s.isTor === true && s.hostingProvider === 'Amazon Web Services'), { timeoutMs: 60_000, what: 'both workers answering from the new lists' });
    expect(served.filter((u) => u === '/tor')).toEqual(['/tor']);
    expect(served.filter((u) => u === '/aws')).toEqual(['/aws']);
    // A worker gets the new list in one message and the primary's updated counts in the next (src/serve.ts), so
    // /metrics may still say 0 right after the swap: wait until every worker (fresh connections go round) says 1.
    const counted = async () => (await (await fetch(`${server!.url}/metrics`, { headers: { Connection: 'close' } })).text()).match(/^dataset_refreshes_total\{dataset="ip-tor-exits"\} \d+$/m)?.[0];
    const bothCount = async () => {
      const lines = await Promise.all(Array.from({ length: 4 }, counted));
      if (!lines.every((line) => line?.endsWith(' 1'))) throw new Error(`seen: ${lines.join(', ')}`);
      return true;
    };
    await waitFor(bothCount, { timeoutMs: 30_000, what: 'the refresh counted once on both workers' });
    expect(server.child.exitCode).toBeNull();
  });
});
