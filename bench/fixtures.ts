// Local upstreams for the bench: the tests' well-behaved ones (test/faults/fixtures.ts: a real DNS server (RFC 1035), a
// k-anonymity range API, a TLS server with a test CA), with a long negative TTL so the service's DNS cache stays warm.
import type { TestDnsServer } from '../test/support/dns-server.js';
import type { RunningServer } from '../test/support/tls-fixtures.js';
import { OK_DOMAIN, OK_ZONE, startUpstreams } from '../test/faults/fixtures.js';

/** The domain every DNS, email and TLS request of the bench is about (A, MX, SPF, DMARC, a DKIM key; TLS on 127.0.0.1). */
export const BENCH_DOMAIN = OK_DOMAIN;

export interface Fixtures {
  dns: TestDnsServer;
  /** `requests()`: range requests received so far (a warm cache keeps this still during a measured run). */
  range: { baseUrl: string; requests(): number };
  tls: { server: RunningServer; caFile: string };
  close(): Promise<void>;
}

/** `breached`: passwords the range API reports with their counts. */
export async function startFixtures(breached: Record<string, number> = {}): Promise<Fixtures> {
  const soa = OK_ZONE[OK_DOMAIN].map((r) => (r.type === 'SOA' ? { ...r, data: { ...r.data, minimum: 3600 } } : r));
  const up = await startUpstreams({ breached, zone: { [OK_DOMAIN]: soa } });
  return { dns: up.dns, range: { baseUrl: up.range.baseUrl, requests: () => up.range.requests.length }, tls: { server: up.tls, caFile: up.caFile }, close: () => up.close() };
}

/** Redis for the Redis rows: the tests' throw-away redis-server (free loopback port, no persistence). */
export { redisBinaryPresent, startRedisServer as startRedis, type TestRedis as BenchRedis } from '../test/support/redis-server.js';
