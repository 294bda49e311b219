// DATA_REFRESH under load (issue #57): the event loop's longest stall while a Tor list and a hosting list are
// downloaded, parsed (in a worker thread) and swapped in, against the same window without a refresh and against the
// old way (the hosting list parsed and built on the event loop, as the start-up still does).
//
// Usage: node --import tsx bench/refresh-swap.ts [rounds, default 5]
// The service runs in this process (its event loop is the one measured, perf_hooks.monitorEventLoopDelay at 1 ms
// resolution); the load (GET /api/v1/ip, 8 connections, open loop 400 req/s) and the publisher of the lists (the
// shipped snapshots, full size) run in child processes. On a shared host the loop's delay includes the time the
// process waits for a core; the second figure does not: the main thread's own CPU time in its longest turn of the
// loop (process.threadCpuUsage between two setImmediate checks), which is what the refresh itself holds the loop for.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createApp } from '../src/app.js';
import { compose } from '../src/compose.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/http/logging.js';
import { projectPath } from '../src/http/spec.js';
import { loadHostingRanges } from '../src/adapters/ip-data/ip-lists.js';
import { EMAIL_LIST_FILES } from '../src/adapters/mail/email-lists.js';
import { endpoint, requestsFor } from './endpoints.js';
import { median, runLoad } from './load.js';
import { settled } from './timed-load.js';
import { GEOIP_TEST_CITY_DB, GEOIP_TEST_ASN_DB } from '../test/fixtures/paths.js';
import { listenOnLoopback } from '../test/support/listening.js';

const ROUNDS = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'refresh-bench-'));

/** The snapshot's ranges per provider, as plain lists (each provider's parser reads one CIDR per line too). */
function publisherFiles(): void {
  const byProvider = new Map<string, string[]>();
  for (const line of readFileSync(projectPath('data/ip/hosting-ranges.csv'), 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#') || line === 'cidr,provider') continue;
    const [cidr, provider] = [line.slice(0, line.indexOf(',')), line.slice(line.indexOf(',') + 1)];
    byProvider.set(provider, [...(byProvider.get(provider) ?? []), cidr]);
  }
  for (const [provider, cidrs] of byProvider) writeFileSync(join(dir, provider.replace(/\W+/g, '-')), `${cidrs.join('\n')}\n`);
  writeFileSync(join(dir, 'tor'), readFileSync(projectPath('data/ip/tor-exits.txt')));
  writeFileSync(join(dir, 'disposable'), readFileSync(EMAIL_LIST_FILES.disposable));
  writeFileSync(join(dir, 'asns'), readFileSync(projectPath('data/ip/hosting-asns.txt')));
}

/** A static file server in its own process: serving the lists costs the measured loop nothing. */
async function startPublisher(): Promise<{ base: string; stop: () => void }> {
  const code = `require('node:http').createServer((q, s) => require('node:fs').readFile(${JSON.stringify(dir)} + q.url, (e, b) => e ? s.writeHead(404).end() : s.end(b))).listen(0, '127.0.0.1', function () { process.stdout.write(String(this.address().port) + '\\n'); });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { base: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

publisherFiles();
const publisher = await startPublisher();
const url = (provider: string) => `${publisher.base}/${provider.replace(/\W+/g, '-')}`;
const config = loadConfig({
  DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMITS: 'off', DNS_SERVERS: '127.0.0.1:9', PWNED_PASSWORDS_URL: 'http://127.0.0.1:9',
  GEOIP_CITY_DB: GEOIP_TEST_CITY_DB, GEOIP_ASN_DB: GEOIP_TEST_ASN_DB, DATA_REFRESH: 'on', ALLOW_PRIVATE_TARGETS: 'true', TOR_EXITS_URL: `${publisher.base}/tor`, DISPOSABLE_DOMAINS_URL: `${publisher.base}/disposable`,
  HOSTING_ASN_URL: `${publisher.base}/asns`,
  AWS_RANGES_URL: url('Amazon Web Services'), GOOGLE_CLOUD_RANGES_URL: url('Google Cloud'), AZURE_RANGES_URL: url('Microsoft Azure'),
  ORACLE_RANGES_URL: url('Oracle Cloud'), CLOUDFLARE_RANGES_URL: url('Cloudflare'), DIGITALOCEAN_RANGES_URL: url('DigitalOcean'),
});
const composition = await compose(config, createLogger('warn'));
await composition.loaded;
const server = await listenOnLoopback(await createApp(composition.deps));
const { key } = await composition.keyStore.create({ name: 'bench' });
const base = server.url;

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
const cpuMs = () => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};
/** The longest stall (ms) while `work` runs, the main thread's CPU time in its longest turn of the loop, the time taken. */
async function stall(work: () => Promise<unknown>): Promise<{ maxMs: number; turnMs: number; tookMs: number }> {
  await new Promise((r) => setTimeout(r, 200));
  histogram.reset();
  let running = true;
  let last = cpuMs();
  let turnMs = 0;
  const tick = () => {
    const now = cpuMs();
    turnMs = Math.max(turnMs, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t = performance.now();
  await work();
  const tookMs = performance.now() - t;
  await new Promise((r) => setTimeout(r, 20)); // the stall that ended with the work is recorded at the next turn
  running = false;
  return { maxMs: histogram.max / 1e6, turnMs, tookMs };
}

const refresher = composition.refresher!;
const results: Record<string, { maxMs: number; turnMs: number; tookMs: number }[]> = { 'no refresh (same window)': [], 'Tor list refresh': [], 'hosting list refresh': [], 'disposable domains refresh': [], 'hosting list on the loop (old reload)': [] };
const load = runLoad({ url: base, requests: requestsFor(endpoint('ip'), key), connections: 8, durationS: 12 * ROUNDS, overallRate: 400, loader: 'paced' });
const loadOver = settled(load);
await new Promise((r) => setTimeout(r, 2000));
for (let i = 0; i < ROUNDS && !loadOver(); i++) {
  results['Tor list refresh'].push(await stall(() => refresher.refresh('ip-tor-exits')));
  results['hosting list refresh'].push(await stall(() => refresher.refresh('ip-hosting')));
  results['disposable domains refresh'].push(await stall(() => refresher.refresh('email-disposable')));
  const window = results['hosting list refresh'].at(-1)!.tookMs;
  results['no refresh (same window)'].push(await stall(() => new Promise((r) => setTimeout(r, window))));
  results['hosting list on the loop (old reload)'].push(await stall(() => loadHostingRanges(projectPath('data/ip/hosting-ranges.csv'))));
}
const measured = await load;
const counts = refresher.counts();
const fmt = (xs: number[]) => `max ${Math.max(...xs).toFixed(1)}, median ${median(xs).toFixed(1)}`;
process.stdout.write(`event-loop stall under load (GET /api/v1/ip at ${Math.round(measured.rps)} req/s, p99 ${measured.p99.toFixed(1)} ms), ${ROUNDS} rounds, ms:\n`);
for (const [name, xs] of Object.entries(results)) {
  process.stdout.write(`  ${name.padEnd(38)} loop delay ${fmt(xs.map((x) => x.maxMs))}; longest turn (CPU) ${fmt(xs.map((x) => x.turnMs))}; took ${fmt(xs.map((x) => x.tookMs))}\n`);
}
process.stdout.write(`refreshes ${JSON.stringify(counts.refreshes)}, failures ${JSON.stringify(counts.failures)}\n`);
await server.close();
await composition.close();
publisher.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
