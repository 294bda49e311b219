// Local upstreams for the bench: the tests' well-behaved ones (test/faults/fixtures.ts: a real DNS server (RFC 1035), a
// k-anonymity range API, a TLS server with a test CA, and the service environment pointing at them), with a long
// negative TTL so the service's DNS cache stays warm.
import { OK_DOMAIN, OK_ZONE, startUpstreams, type Upstreams } from '../test/faults/fixtures.js';

/** The domain every DNS, email and TLS request of the bench is about (A, MX, SPF, DMARC, a DKIM key; TLS on 127.0.0.1). */
export const BENCH_DOMAIN = OK_DOMAIN;

/** `breached`: passwords the range API reports with their counts. */
export async function startFixtures(breached: Record<string, number> = {}): Promise<Upstreams> {
  const soa = OK_ZONE[OK_DOMAIN].map((r) => (r.type === 'SOA' ? { ...r, data: { ...r.data, minimum: 3600 } } : r));
  return startUpstreams({ breached, zone: { [OK_DOMAIN]: soa } });
}

/** Redis for the Redis rows: the tests' throw-away redis-server (free loopback port, no persistence). */
export { redisBinaryPresent, startRedisServer as startRedis, type TestRedis as BenchRedis } from '../test/support/redis-server.js';
