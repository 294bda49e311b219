// Local upstreams for the bench: a real DNS server (RFC 1035), a k-anonymity range API, a TLS server with a test CA, redis-server.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startDnsServer, type TestDnsServer, type Zone } from '../test/support/dns-server.js';
import { createTestPki, startTlsServer, type RunningServer } from '../test/support/tls-fixtures.js';

/** The domain every DNS, email and TLS request of the bench is about. */
export const BENCH_DOMAIN = 'bench.test';

const SOA = { type: 'SOA' as const, ttl: 3600, data: { mname: `ns.${BENCH_DOMAIN}`, rname: `hostmaster.${BENCH_DOMAIN}`, minimum: 3600 } };

/** A, MX, TXT (SPF), DMARC and a DKIM key; long TTLs (and a long negative TTL) so the service's cache stays warm. */
export const BENCH_ZONE: Zone = {
  [BENCH_DOMAIN]: [
    SOA,
    { type: 'A', data: '127.0.0.1', ttl: 3600 },
    { type: 'MX', data: { preference: 10, exchange: `mx.${BENCH_DOMAIN}` }, ttl: 3600 },
    { type: 'TXT', data: `v=spf1 ip4:127.0.0.1 include:_spf.${BENCH_DOMAIN} -all`, ttl: 3600 },
    { type: 'TXT', data: 'bench-verification=1', ttl: 3600 },
  ],
  [`mx.${BENCH_DOMAIN}`]: [{ type: 'A', data: '127.0.0.1', ttl: 3600 }],
  [`_spf.${BENCH_DOMAIN}`]: [{ type: 'TXT', data: 'v=spf1 ip4:127.0.0.0/8 ~all', ttl: 3600 }],
  [`_dmarc.${BENCH_DOMAIN}`]: [{ type: 'TXT', data: `v=DMARC1; p=reject; sp=quarantine; rua=mailto:dmarc@${BENCH_DOMAIN}`, ttl: 3600 }],
  [`google._domainkey.${BENCH_DOMAIN}`]: [{ type: 'TXT', data: 'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC', ttl: 3600 }],
};

const sha1 = (s: string): string => createHash('sha1').update(s, 'utf8').digest('hex').toUpperCase();

export interface RangeServer {
  baseUrl: string;
  /** Range requests received so far (a warm cache keeps this still during a measured run). */
  requests(): number;
  close(): Promise<void>;
}

/**
 * `GET /range/{5 hex}`: 800 padded lines like the real service (`SUFFIX:COUNT`, padding rows count 0);
 * each password in `breached` appears in its prefix's answer with its count.
 */
export async function startRangeServer(breached: Record<string, number> = {}): Promise<RangeServer> {
  const hits = new Map<string, string[]>();
  for (const [pw, count] of Object.entries(breached)) {
    const h = sha1(pw);
    hits.set(h.slice(0, 5), [...(hits.get(h.slice(0, 5)) ?? []), `${h.slice(5)}:${count}`]);
  }
  let count = 0;
  const server: Server = createServer((req, res) => {
    count++;
    const m = /^\/range\/([0-9A-F]{5})$/.exec(req.url ?? '');
    if (!m) return void res.writeHead(404).end();
    const lines = [...(hits.get(m[1]) ?? [])];
    for (let i = lines.length; i < 800; i++) lines.push(`${sha1(`${m[1]}-pad-${i}`).slice(5)}:0`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => count,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface TlsFixture {
  server: RunningServer;
  /** PEM file of the test root CA (for TLS_EXTRA_CA_FILE). */
  caFile: string;
}

/** A TLS server on 127.0.0.1 presenting a leaf for BENCH_DOMAIN issued by a test intermediate; the root goes to a file. */
export async function startTlsFixture(dir: string): Promise<TlsFixture> {
  const pki = createTestPki('Bench');
  const leaf = pki.leaf({ subject: [['CN', BENCH_DOMAIN]], dnsNames: [BENCH_DOMAIN] });
  const caFile = join(dir, 'bench-ca.pem');
  writeFileSync(caFile, pki.root.certPem);
  const server = await startTlsServer({ cert: leaf.chainPem, key: leaf.keyPem, hsts: 'max-age=31536000' });
  return { server, caFile };
}

export interface Fixtures {
  dns: TestDnsServer;
  range: RangeServer;
  tls: TlsFixture;
  close(): Promise<void>;
}

export async function startFixtures(dir: string, breached: Record<string, number>): Promise<Fixtures> {
  const [dns, range, tls] = await Promise.all([startDnsServer(BENCH_ZONE), startRangeServer(breached), startTlsFixture(dir)]);
  return {
    dns,
    range,
    tls,
    close: async () => {
      await Promise.all([dns.close(), range.close(), tls.server.close()]);
    },
  };
}

/** Redis for the Redis rows: the tests' throw-away redis-server (free loopback port, no persistence). */
export { redisBinaryPresent, startRedisServer as startRedis, type TestRedis as BenchRedis } from '../test/support/redis-server.js';
