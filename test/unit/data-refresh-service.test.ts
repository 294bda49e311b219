// DATA_REFRESH=on in the service (issue #57): a download from a local publisher swaps the list in the way SIGHUP does;
// /readyz dates the list in use, /metrics counts, a failure keeps the list and logs one warning, a restart reads the
// saved download.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

let publisher: Server;
let tor = '';
/** The shipped ASN list and MaxMind's test AS7922 (Comcast, 50.128.0.0/9 in the test ASN database). */
const asns = `${readFileSync(new URL('../../data/ip/hosting-asns.txt', import.meta.url), 'utf8')}AS7922 # COMCAST (test)\n`;
let dataDir: string;
let env: Record<string, string>;
let h: Harness;

beforeAll(async () => {
  publisher = createServer((req, res) => {
    const body = req.url === '/tor' ? tor : req.url === '/asns' ? asns : undefined;
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'last-modified': 'Fri, 27 Nov 2026 08:00:00 GMT' }).end(body);
  });
  await new Promise<void>((r) => publisher.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(publisher.address() as AddressInfo).port}`;
  dataDir = mkdtempSync(join(tmpdir(), 'vls-refresh-'));
  // Loopback publishers need ALLOW_PRIVATE_TARGETS, as the TLS and SMTP tests' servers do.
  env = { DATA_REFRESH: 'on', ALLOW_PRIVATE_TARGETS: 'true', DATA_DIR: dataDir, TOR_EXITS_URL: `${base}/tor`, DISPOSABLE_DOMAINS_URL: `${base}/none`, HOSTING_ASN_URL: `${base}/asns` };
  h = await startHarness(env);
});
afterAll(async () => {
  await h.close();
  await new Promise<void>((r) => publisher.close(() => r()));
  rmSync(dataDir, { recursive: true, force: true });
});

const dated = async (name: string) => ((await h.call('/readyz')).body.datasets as { name: string; date: string }[]).find((d) => d.name === name)?.date;
const metric = async (name: string) => Number(new RegExp(`^${name}\\{dataset="ip-tor-exits"\\} (\\d+)$`, 'm').exec(await (await h.fetch('/metrics')).text())?.[1] ?? NaN);
const shippedExits = readFileSync(new URL('../../data/ip/tor-exits.txt', import.meta.url), 'utf8').split('\n').filter((l) => /^\d/.test(l));

describe('DATA_REFRESH=on', () => {
  it('swaps a new Tor list in: the answers, /readyz\'s date and the refresh counter follow', async () => {
    tor = [...shippedExits, '81.2.69.142'].join('\n');
    expect((await h.call('/api/v1/ip/81.2.69.142')).body.security).toMatchObject({ isTor: false });
    expect(await h.composition.refresher!.refresh('ip-tor-exits')).toBe(true);
    expect((await h.call('/api/v1/ip/81.2.69.142')).body.security).toMatchObject({ isTor: true });
    expect(await dated('ip-tor-exits')).toBe('2026-11-27');
    expect(await metric('dataset_refreshes_total')).toBe(1);
    expect(readFileSync(join(dataDir, 'lists', 'tor-exits.txt'), 'utf8')).toContain('81.2.69.142');
  });

  it('keeps the list in use when the download is broken: one warning, one failure counted', async () => {
    const before = h.logs.length;
    tor = '<html>maintenance</html>';
    expect(await h.composition.refresher!.refresh('ip-tor-exits')).toBe(false);
    expect((await h.call('/api/v1/ip/81.2.69.142')).body.security).toMatchObject({ isTor: true });
    expect(await dated('ip-tor-exits')).toBe('2026-11-27');
    expect(await metric('dataset_refresh_failures_total')).toBe(1);
    const warnings = h.logs.slice(before).filter((l) => l.includes('"level":40'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('refresh of ip-tor-exits failed; the data in use stays');
  });

  it('swaps a new hosting ASN list in (daily, HOSTING_ASN_URL): an address of a newly listed AS is hosting', async () => {
    expect((await h.call('/api/v1/ip/50.128.0.1')).body.security).toMatchObject({ isHosting: false });
    expect(await h.composition.refresher!.refresh('ip-hosting-asns')).toBe(true);
    expect((await h.call('/api/v1/ip/50.128.0.1')).body.security).toMatchObject({ isHosting: true });
    expect(await dated('ip-hosting-asns')).toBe('2026-11-27');
    expect(readFileSync(join(dataDir, 'lists', 'hosting-asns.txt'), 'utf8')).toMatch(/^# date: 2026-11-27\n(.*\n)*AS7922 # COMCAST \(test\)$/m);
  });

  it('a restart reads the saved download, not the shipped snapshot', async () => {
    const again = await startHarness(env);
    try {
      expect((await again.call('/api/v1/ip/81.2.69.142')).body.security).toMatchObject({ isTor: true });
      expect(((await again.call('/readyz')).body.datasets as { name: string; date: string }[]).find((d) => d.name === 'ip-tor-exits')?.date).toBe('2026-11-27');
    } finally {
      await again.close();
    }
  });
});
