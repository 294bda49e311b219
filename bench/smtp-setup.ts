// The SMTP benches' set-up: fixture domains whose MX names resolve to loopback addresses (a real DNS server) and
// Nodemailer's smtp-server on them (test/support/smtp-fixture.ts), both in this process, which runs on the load
// generator's CPUs (cpuPlan pins it when the service starts), never on the service's; the built service with SMTP
// checks on; GET /api/v1/bic/DEUTDEFF as an open loop from load.ts (`paced`, in a child, timing off this loop).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GEOIP_TEST_ASN_DB, GEOIP_TEST_CITY_DB } from '../test/fixtures/paths.js';
import { startDnsServer, type Zone } from '../test/support/dns-server.js';
import { startSmtpFixture, type RecordedSession } from '../test/support/smtp-fixture.js';
import { runLoad, type Measured } from './load.js';
import { startWithKey } from './processes.js';

export interface SmtpBenchOptions {
  name: string;
  domains: number;
  domain(d: number): string;
  /** The address domain d's MX name resolves to (several domains may share one). */
  ip(d: number): string;
  rcptDelayMs: number;
  /** Whether the servers accept a recipient's local part (otherwise 550 5.1.1). */
  accepts(local: string): boolean;
  /** Local parts answered 450 4.7.1 the first time they are asked (greylisting), judged as `accepts` says afterwards. */
  greylistOnce?(local: string): boolean;
  env: Record<string, string>;
  bic: { rate: number; connections: number };
}

export async function startSmtpBench(o: SmtpBenchOptions) {
  const dir = mkdtempSync(join(tmpdir(), `vls-${o.name}-`));
  const zone: Zone = {};
  for (let d = 0; d < o.domains; d++) {
    zone[o.domain(d)] = [{ type: 'MX', data: { preference: 10, exchange: `mx.${o.domain(d)}` } }];
    zone[`mx.${o.domain(d)}`] = [{ type: 'A', data: o.ip(d) }];
  }
  const dns = await startDnsServer(zone);
  const ips = [...new Set(Array.from({ length: o.domains }, (_, d) => o.ip(d)))];
  const deferred = new Set<string>();
  const rcpt = (local: string) => {
    if (o.greylistOnce?.(local) && !deferred.has(local)) return (deferred.add(local), { code: 450, text: '4.7.1 greylisted, try again later' });
    return o.accepts(local) ? null : { code: 550, text: '5.1.1 no such user' };
  };
  const smtp = await startSmtpFixture(Object.fromEntries(ips.map((ip) => [ip, { rcptDelayMs: o.rcptDelayMs, rcpt }])));
  const env = {
    DATA_DIR: dir, DNS_SERVERS: `127.0.0.1:${dns.port}`, ALLOW_PRIVATE_TARGETS: 'true', GEOIP_CITY_DB: GEOIP_TEST_CITY_DB, GEOIP_ASN_DB: GEOIP_TEST_ASN_DB,
    SMTP_CHECK: 'on', SMTP_HELO_NAME: 'verifier.bench.test', SMTP_MAIL_FROM: 'check@verifier.bench.test', SMTP_PORT: String(smtp.port),
    ...o.env,
  };
  const svc = await startWithKey({ name: o.name, env, dir });
  const key = svc.key;
  const requests = [{ method: 'GET', path: '/api/v1/bic/DEUTDEFF', headers: { 'x-api-key': key } }];
  /** BIC for `durationS` as an open loop; `started` once the load has begun. */
  const load = (durationS: number, started?: () => void): Promise<Measured> =>
    runLoad({ url: svc.url, requests, connections: o.bic.connections, durationS, overallRate: o.bic.rate, loader: 'paced', started });
  /** The same load, resolved (with the run, boxed) once it has begun: for work sent beside it. */
  const loadBegun = (durationS: number): Promise<{ run: Promise<Measured> }> =>
    new Promise((begun) => {
      const run: Promise<Measured> = load(durationS, () => queueMicrotask(() => begun({ run })));
    });
  /** The fixture's record over every server address: sessions, RCPTs (probes: the catch-all's `q…`), DATA, the most at once on one. */
  const figures = () => {
    const all = ips.flatMap((ip) => smtp.sessions(ip));
    const count = (f: (s: RecordedSession) => number) => all.reduce((a, s) => a + f(s), 0);
    const probes = count((s) => s.rcpts.filter((r) => r.startsWith('q')).length);
    return { sessions: all.length, rcpts: count((s) => s.rcpts.length), probes, data: count((s) => Number(s.data)), maxConcurrent: Math.max(...ips.map((ip) => smtp.maxConcurrent(ip))) };
  };
  /** POST /api/v1/email/bulk with `smtp: true`: the items' deliverability status (`status/reason` with `reasons`), counted. */
  const bulk = async (items: string[], reasons = false): Promise<Record<string, number>> => {
    const res = await fetch(`${svc.url}/api/v1/email/bulk`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ items, smtp: true }) });
    if (res.status !== 200) throw new Error(`bulk answered ${res.status}: ${await res.text()}`);
    const counts: Record<string, number> = {};
    for (const r of ((await res.json()) as { results: Array<{ status: number; result?: { deliverability: { status: string; reason: string } } }> }).results) {
      const d = r.result?.deliverability;
      const k = d ? (reasons ? `${d.status}/${d.reason}` : d.status) : String(r.status);
      counts[k] = (counts[k] ?? 0) + 1;
    }
    return counts;
  };
  const close = async () => {
    await svc.stop();
    await smtp.close();
    await dns.close();
  };
  return { svc, key, env, dir, smtp, ips, load, loadBegun, figures, bulk, close };
}
