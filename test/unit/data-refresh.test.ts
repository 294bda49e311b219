// DATA_REFRESH (issue #57): lists downloaded from a local HTTP server (new, broken, shrunk, slow, redirected to a
// private address), checked, written atomically and swapped in; a failure keeps the list in use and counts.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fetchList, ListFetchError, type FetchListOptions } from '../../src/adapters/refresh/fetch-list.js';
import { disposableList, domainSetInSlices, hostingAsnList, hostingList, loadedFromResult, parseFileOffLoop, torExitList, type ListFetch } from '../../src/adapters/refresh/lists.js';
import { createRefresher, shrinkProblem, type RefreshList } from '../../src/adapters/refresh/refresher.js';
import { asnIndex, loadHostingAsns, type HostingAsns } from '../../src/adapters/ip-data/hosting-asns.js';
import type { LoadedRanges } from '../../src/adapters/ip-data/ip-lists.js';
import { guardedAddress } from '../../src/adapters/tls/target-guard.js';
import { createTestPki } from '../support/tls-fixtures.js';

const exits = (n: number) => Array.from({ length: n }, (_, i) => `185.220.${Math.floor(i / 200)}.${(i % 200) + 1}`).join('\n');
/** What the local publisher serves, by path; a function answers the request itself. */
const routes = new Map<string, string | ((res: import('node:http').ServerResponse) => void)>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const route = routes.get(req.url ?? '');
    if (route === undefined) return void res.writeHead(404).end();
    if (typeof route === 'function') return route(res);
    res.writeHead(200, { 'content-type': 'text/plain', 'last-modified': 'Sat, 28 Nov 2026 10:00:00 GMT' }).end(route);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://lists.test:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** lists.test is the local server; every other name resolves to a private address the guard must refuse. */
const resolve = async (name: string) => (name === 'lists.test' ? ['127.0.0.1'] : ['10.1.2.3']);
/** ALLOW_PRIVATE_TARGETS for the test server's own name only (as the TLS tests allow loopback); the real guard for every hop. */
const guard: typeof guardedAddress = (o, target) => guardedAddress({ ...o, allowPrivate: target.kind === 'hostname' && target.name === 'lists.test' }, target);
const options: FetchListOptions = { resolve, allowPrivate: false, guard, timeoutMs: 1_000, maxBytes: 100_000 };
const fetch: ListFetch = (url) => fetchList(options, url);

let dir: string;
/** The list in use before a refresh (the shipped file's role). */
let shipped: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'refresh-'));
  shipped = join(await mkdtemp(join(tmpdir(), 'shipped-')), 'list');
  routes.clear();
});
afterEach(() => Promise.all([rm(dir, { recursive: true, force: true }), rm(shipped, { force: true })]));

/** A swap as the service does it: the dataset's reload reads the file just written (off the event loop). */
function swapInto(swapped: { value: LoadedRanges; date: string | null }[]) {
  return async (name: string, path: string) => {
    const { result, date } = await parseFileOffLoop(name === 'ip-hosting' ? 'hosting' : 'tor', path);
    swapped.push({ value: loadedFromResult(result, path, date ?? ''), date });
  };
}
const quiet = { info: () => undefined, warn: () => undefined };

/** A Tor list refresher over the local server (`inUse` exits in use), with what was swapped in and the warnings logged. */
async function torRefresher(inUse = 100) {
  await writeFile(shipped, exits(inUse));
  const swapped: { value: LoadedRanges; date: string | null }[] = [];
  const warnings: string[] = [];
  const list = torExitList(fetch, `${base}/tor`, async () => shipped);
  const refresher = createRefresher({ dir, lists: [list], swap: swapInto(swapped), logger: { info: () => undefined, warn: (f, msg) => warnings.push(`${msg}: ${(f as { err: string }).err}`) } });
  return { refresher, swapped, warnings };
}

describe('a Tor exit list refresh', () => {
  it('a new list: parsed, written atomically into the folder, swapped in, dated by Last-Modified', async () => {
    routes.set('/tor', exits(120));
    const { refresher, swapped, warnings } = await torRefresher();
    expect(await refresher.refresh('ip-tor-exits')).toBe(true);
    expect(warnings).toEqual([]);
    expect(swapped).toHaveLength(1);
    expect(swapped[0].date).toBe('2026-11-28');
    expect(swapped[0].value.entries).toBe(120);
    expect(swapped[0].value.table.lookup('185.220.0.7', 4)).toBe(0);
    expect(swapped[0].value.table.lookup('8.8.8.8', 4)).toBe(-1);
    expect(await readdir(dir)).toEqual(['tor-exits.txt']); // no temporary file left behind
    expect(await readFile(join(dir, 'tor-exits.txt'), 'utf8')).toMatch(/^# Tor exit addresses.*\n# date: 2026-11-28\n185\.220\.0\.1\n/);
    expect(refresher.counts()).toEqual({ refreshes: { 'ip-tor-exits': 1 }, failures: { 'ip-tor-exits': 0 } });
  });

  it.each([
    ['a broken list (an HTML page)', () => routes.set('/tor', '<html><body>Service unavailable</body></html>'), /data line 1 is not an address/],
    ['an empty list', () => routes.set('/tor', '\n'), /no exit address/],
    ['a list that shrank by more than half', () => routes.set('/tor', exits(40)), /shrank from 100 to 40 entries/],
    ['a list over the size cap', () => routes.set('/tor', exits(9_000)), /more than the cap of 100000 bytes/],
    ['an HTTP error', () => routes.set('/tor', (res) => void res.writeHead(503).end()), /answered HTTP 503/],
    ['a slow server (headers, then nothing)', () => routes.set('/tor', (res) => void res.writeHead(200).write('185.220.0.1\n')), /no complete answer within 1000 ms/],
    ['a redirect to a private address', () => routes.set('/tor', (res) => void res.writeHead(302, { location: 'http://internal.test/tor' }).end()), /internal\.test is a non-public address, which is not fetched/],
  ])('%s: the list in use stays, one warning, one failure counted', async (_label, serve, reason) => {
    serve();
    const { refresher, swapped, warnings } = await torRefresher();
    expect(await refresher.refresh('ip-tor-exits')).toBe(false);
    expect(swapped).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^refresh of ip-tor-exits failed; the data in use stays: /);
    expect(warnings[0]).toMatch(reason);
    expect(await readdir(dir)).toEqual([]);
    expect(refresher.counts().failures['ip-tor-exits']).toBe(1);
  });

  it('follows a redirect to the same (allowed) publisher, guarding the new hop', async () => {
    routes.set('/old', (res) => void res.writeHead(301, { location: '/tor' }).end());
    routes.set('/tor', exits(3));
    const got = await fetchList(options, `${base}/old`);
    expect(got.url).toBe(`${base}/tor`);
    expect(got.body.split('\n')).toHaveLength(3);
  });

  it('takes a list over HTTPS (the certificate checked for the URL\'s host) and follows no redirect from HTTPS to HTTP', async () => {
    const pki = createTestPki('Refresh');
    const leaf = pki.leaf({ subject: [['CN', 'lists.test']], dnsNames: ['lists.test'] });
    const tls = createHttpsServer({ key: leaf.keyPem, cert: leaf.chainPem }, (req, res) => {
      if (req.url === '/tor') return void res.writeHead(200).end(exits(3));
      res.writeHead(302, { location: `${base}/tor` }).end();
    });
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    try {
      const https = `https://lists.test:${(tls.address() as AddressInfo).port}`;
      const got = await fetchList({ ...options, ca: [pki.root.certPem] }, `${https}/tor`);
      expect(got.body.split('\n')).toHaveLength(3);
      await expect(fetchList({ ...options, ca: [pki.root.certPem] }, `${https}/old`)).rejects.toThrow(/redirects from HTTPS to http, which is not followed/);
      await expect(fetchList(options, `${https}/tor`)).rejects.toThrow(/the connection failed/); // not our CA: refused
    } finally {
      await new Promise<void>((r) => tls.close(() => r()));
    }
  });

  it('refuses the local server itself when private targets are not allowed (ALLOW_PRIVATE_TARGETS off)', async () => {
    routes.set('/tor', exits(3));
    await expect(fetchList({ ...options, guard: undefined }, `${base}/tor`)).rejects.toThrow(ListFetchError);
    await expect(fetchList({ ...options, guard: undefined }, `http://127.0.0.1:1/tor`)).rejects.toThrow(/127\.0\.0\.1 is a non-public address/);
  });
});

describe('the hosting list and the disposable domains', () => {
  it('builds the hosting CSV from each provider\'s own format, dated by the oldest, per-provider counts', async () => {
    routes.set('/aws.json', JSON.stringify({ createDate: '2026-11-27-10-00-00', prefixes: [{ ip_prefix: '3.5.0.0/16' }], ipv6_prefixes: [{ ipv6_prefix: '2600:1f00::/24' }] }));
    routes.set('/cf-v4', '104.16.0.0/13\n');
    await writeFile(shipped, '3.5.0.0/16,Amazon Web Services\n');
    const swapped: { value: LoadedRanges; date: string | null }[] = [];
    const list = hostingList(fetch, { aws: [`${base}/aws.json`], cloudflare: [`${base}/cf-v4`] }, async () => shipped);
    const refresher = createRefresher({ dir, lists: [list], swap: swapInto(swapped), logger: quiet });
    expect(await refresher.refresh('ip-hosting')).toBe(true);
    expect(swapped[0].date).toBe('2026-11-27');
    const table = swapped[0].value.table;
    expect(table.labels[table.lookup('3.5.1.1', 4)]).toBe('Amazon Web Services');
    expect(table.labels[table.lookup('104.17.0.1', 4)]).toBe('Cloudflare');
    const csv = await readFile(join(dir, 'hosting-ranges.csv'), 'utf8');
    expect(csv).toMatch(/^# date: 2026-11-27$/m);
    expect(csv).toContain('2600:1f00::/24,Amazon Web Services');
  });

  it('refuses a hosting download where one provider lost more than half its ranges (the total grew)', async () => {
    routes.set('/cf-v4', '104.16.0.0/13\n');
    await writeFile(shipped, Array.from({ length: 15 }, (_, i) => `104.${i}.0.0/16,Cloudflare`).join('\n'));
    routes.set('/aws.json', JSON.stringify({ prefixes: Array.from({ length: 20 }, (_, i) => ({ ip_prefix: `3.${i}.0.0/16` })) }));
    const list: RefreshList = hostingList(fetch, { aws: [`${base}/aws.json`], cloudflare: [`${base}/cf-v4`] }, async () => shipped);
    const warnings: string[] = [];
    const refresher = createRefresher({ dir, lists: [list], swap: async () => undefined, logger: { info: () => undefined, warn: (f) => warnings.push((f as { err: string }).err) } });
    expect(await refresher.refresh('ip-hosting')).toBe(false);
    expect(warnings).toEqual(['Cloudflare shrank from 15 to 1 entries (more than half)']);
  });

  it('takes the disposable blocklist (one name per line) and refuses one with a line that is not a domain', async () => {
    routes.set('/disposable', '# comment\nMailinator.com\n10minutemail.com\n');
    await writeFile(shipped, '["mailinator.com", "guerrillamail.com"]');
    let set: ReadonlySet<string> | null = null;
    const list = disposableList(fetch, `${base}/disposable`, async () => shipped);
    const swap = async (_name: string, path: string) => {
      const { result } = await parseFileOffLoop('disposable', path);
      if (result.kind === 'domains') set = await domainSetInSlices(result.domains);
    };
    const refresher = createRefresher({ dir, lists: [list], swap, logger: quiet });
    expect(await refresher.refresh('email-disposable')).toBe(true);
    expect([...set!]).toEqual(['mailinator.com', '10minutemail.com']);
    routes.set('/disposable', 'mailinator.com\n<!doctype html>\n');
    expect(await refresher.refresh('email-disposable')).toBe(false);
    expect([...set!]).toEqual(['mailinator.com', '10minutemail.com']);
  });
});

/** X4BNet's format: `AS<number> # name`, one per line. */
const asnLines = (n: number, from = 64_500) => Array.from({ length: n }, (_, i) => `AS${from + i} # HOST-${i}, DE`).join('\n');

describe('the hosting ASN list', () => {
  /** A refresher of the ASN list whose swap reads the saved file as the service's reload does. */
  async function asnRefresher(inUse: string) {
    await writeFile(shipped, inUse);
    const swapped: HostingAsns[] = [];
    const warnings: string[] = [];
    const list = hostingAsnList(fetch, `${base}/asns`, async () => shipped);
    const swap = async (_name: string, path: string) => void swapped.push(await loadHostingAsns(path));
    const refresher = createRefresher({ dir, lists: [list], swap, logger: { info: () => undefined, warn: (f) => warnings.push((f as { err: string }).err) } });
    return { refresher, swapped, warnings };
  }

  it('takes X4BNet\'s list less the access networks ADR 0026 leaves out, dated by Last-Modified', async () => {
    routes.set('/asns', `${asnLines(10)}\nAS7850 # CityLink Fiber\nAS24940 # HETZNER-AS, DE\n`);
    const { refresher, swapped, warnings } = await asnRefresher(asnLines(10));
    expect(await refresher.refresh('ip-hosting-asns')).toBe(true);
    expect(warnings).toEqual([]);
    expect(swapped[0].date).toBe('2026-11-28');
    expect(asnIndex(swapped[0], 24940)).toBeGreaterThanOrEqual(0);
    expect(asnIndex(swapped[0], 7850)).toBe(-1);
    expect(swapped[0].asns).toHaveLength(11);
    expect(await readFile(join(dir, 'hosting-asns.txt'), 'utf8')).toMatch(/^# Hosting, data-centre .* by the service \(DATA_REFRESH\).*\n.*AS7850.*\n# date: 2026-11-28\nAS64500 # HOST-0, DE\n/);
  });

  it.each([
    ['a broken list (an HTML page)', '<html><body>Not found</body></html>', /no ASN/],
    ['a line that is no ASN', `${asnLines(10)}\nAS12x # broken`, /is not "AS<number> # name"/],
    ['a list that shrank by more than half', asnLines(4), /shrank from 10 to 4 entries/],
  ])('%s: the list in use stays, one failure counted', async (_label, body, reason) => {
    routes.set('/asns', body);
    const { refresher, swapped, warnings } = await asnRefresher(asnLines(10));
    expect(await refresher.refresh('ip-hosting-asns')).toBe(false);
    expect(swapped).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(reason);
    expect(refresher.counts().failures['ip-hosting-asns']).toBe(1);
  });
});

describe('shrinkProblem', () => {
  it.each([
    [null, { total: 1 }, null],
    [{ total: 100 }, { total: 50 }, null],
    [{ total: 100 }, { total: 49 }, 'the list shrank from 100 to 49 entries (more than half)'],
    [{ total: 100, A: 10 }, { total: 100, B: 10 }, null], // a provider no longer configured is not compared
  ])('%o -> %o: %s', (before, after, problem) => {
    expect(shrinkProblem(before, after)).toBe(problem);
  });
});
