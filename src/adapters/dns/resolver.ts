// Caching stub resolver (RFC 1035 client, RFC 2308 negative caching) over the configured recursive DNS servers.
import dns from 'node:dns';
import net from 'node:net';
import { parseHostPort } from '../../domain/host-port.js';
import { UpstreamFailure } from '../../errors.js';
import { DnsAnswerCache } from './cache.js';
import { exchange, toDnsAnswer } from './wire.js';
import type { DnsAnswer, DnsServer, RecordType } from './wire.js';
import { traced } from '../tracing/spans.js';

export type { DnsAnswer, DnsRecord, DnsServer, RecordType } from './wire.js';
export { RECORD_TYPES } from './wire.js';

export interface DnsResolver {
  /**
   * Records of `type` for `name` (ASCII, A-labels; a trailing dot and upper case are ignored).
   * NXDOMAIN and NODATA are answers (records: []), not errors. Timeout, SERVFAIL/REFUSED or unreachable
   * servers throw UpstreamFailure ("DNS lookup failed", answered 502 UPSTREAM_UNAVAILABLE). A name that cannot be put
   * on the wire (label > 63, name > 253, non-ASCII, empty label) throws TypeError.
   */
  query(name: string, type: RecordType): Promise<DnsAnswer>;
  /** hits: answered from cache; misses: not (coalesced callers included); size: cached answers. */
  stats(): { hits: number; misses: number; size: number };
  /** Milliseconds the cached answer for (name, type) stays valid; null when it is not cached. */
  remainingMs(name: string, type: RecordType): number | null;
}

export interface DnsResolverOptions {
  /** Tried in order; must not be empty. */
  servers: DnsServer[];
  /** Budget for one query across all servers, in milliseconds. */
  timeoutMs: number;
  /** Bound of the LRU answer cache; default 10,000; 0 disables caching. */
  cacheEntries?: number;
  logger?: { debug: (obj: object, msg?: string) => void; warn: (obj: object, msg?: string) => void };
}

/** One "ip", "ip:port", "ipv6" or "[ipv6]:port" server (the form of dns.getServers() and DNS_SERVERS); null if malformed. */
export const parseDnsServer = (text: string): DnsServer | null => parseHostPort(text);

/** The system's resolvers (node's dns.getServers(), i.e. /etc/resolv.conf); 127.0.0.1:53 when it lists none. */
export function systemDnsServers(): DnsServer[] {
  const servers = dns
    .getServers()
    .map(parseDnsServer)
    .filter((s): s is DnsServer => s !== null);
  return servers.length > 0 ? servers : [{ host: '127.0.0.1', port: 53 }];
}

type AddressLookup = (host: string, opts: { all: true }) => Promise<Array<{ address: string; family: number }>>;

/**
 * DNS_SERVERS with names replaced by their addresses (IPv4 first, each with the name's port), looked up once through
 * the system resolver: a resolver cannot be found through itself. Rejects naming the host that does not resolve.
 */
export async function resolveServerNames(servers: DnsServer[], lookup: AddressLookup = dns.promises.lookup): Promise<DnsServer[]> {
  const resolved = await Promise.all(
    servers.map(async (server) => {
      if (net.isIP(server.host)) return [server];
      const addresses = await lookup(server.host, { all: true }).catch((err: NodeJS.ErrnoException) => {
        throw new Error(`"${server.host}" does not resolve (${err.code ?? 'lookup failed'})`);
      });
      if (addresses.length === 0) throw new Error(`"${server.host}" does not resolve (no address)`);
      return [...addresses].sort((a, b) => a.family - b.family).map(({ address }) => ({ host: address, port: server.port }));
    }),
  );
  const unique = new Map(resolved.flat().map((s) => [`${s.host}#${s.port}`, s]));
  return [...unique.values()];
}

/** Lower-case, without trailing dot; throws TypeError when the name cannot be sent. */
function wireName(name: string): string {
  const n = name.toLowerCase().replace(/\.$/, '');
  const ok = n.length > 0 && n.length <= 253 && /^[\x21-\x7e]+$/.test(n) && n.split('.').every((l) => l.length >= 1 && l.length <= 63);
  if (!ok) throw new TypeError('invalid DNS name');
  return n;
}

export function createDnsResolver(opts: DnsResolverOptions): DnsResolver {
  if (opts.servers.length === 0) throw new Error('createDnsResolver: no DNS servers configured');
  const servers = [...opts.servers];
  const cache = new DnsAnswerCache(opts.cacheEntries ?? 10_000);
  const inflight = new Map<string, Promise<DnsAnswer>>();
  // Names already checked and normalised (a DNS request looks up ~30 names: records, SPF, DMARC, DKIM selectors).
  const names = new Map<string, string>();
  let hits = 0;
  let misses = 0;

  /**
   * Servers in order within one overall deadline: each gets an equal share of the time still left,
   * so a silent first server leaves time for the next. NOERROR/NXDOMAIN is final; any other rcode
   * (SERVFAIL, REFUSED, ...) or a network error moves on to the next server.
   */
  async function upstream(name: string, type: RecordType): Promise<DnsAnswer> {
    const deadline = performance.now() + opts.timeoutMs;
    for (let i = 0; i < servers.length; i++) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) break;
      const server = servers[i];
      try {
        const p = await traced(
          `DNS ${type}`,
          { 'dns.question.name': name, 'server.address': server.host, 'server.port': server.port, 'network.transport': 'udp' },
          () => exchange(server, name, type, remaining / (servers.length - i)),
        );
        if (p.rcode === 'NOERROR' || p.rcode === 'NXDOMAIN') {
          const { answer, ttl } = toDnsAnswer(p, name, type);
          cache.set(`${type} ${name}`, answer, ttl);
          return answer;
        }
        opts.logger?.warn({ server: `${server.host}:${server.port}`, type, rcode: p.rcode }, 'DNS server failed');
      } catch (err) {
        const reason = err instanceof Error ? err.message : 'unknown';
        opts.logger?.warn({ server: `${server.host}:${server.port}`, type, reason }, 'DNS server failed');
      }
    }
    throw new UpstreamFailure('dns', 'DNS lookup failed');
  }

  return {
    query(name, type) {
      let n = names.get(name);
      if (n === undefined) {
        try {
          n = wireName(name);
        } catch (err) {
          return Promise.reject(err);
        }
        if (names.size >= 10_000) names.clear();
        names.set(name, n);
      }
      const key = `${type} ${n}`;
      const cached = cache.get(key);
      if (cached) {
        hits++;
        return Promise.resolve(cached);
      }
      misses++;
      const pending = inflight.get(key);
      if (pending) return pending;
      const p = upstream(n, type).finally(() => inflight.delete(key));
      inflight.set(key, p);
      return p;
    },
    stats: () => ({ hits, misses, size: cache.size }),
    remainingMs(name, type) {
      const n = names.get(name);
      return n === undefined ? null : (cache.remainingMs(`${type} ${n}`) ?? null);
    },
  };
}
