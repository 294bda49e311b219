// DNS wire-format client for one server (RFC 1035 over UDP, TCP fallback on truncation per RFC 7766; EDNS0 per RFC 6891; AD bit per RFC 6840 §5.7).
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet } from 'dns-packet';
import type { RecordType } from '../../domain/dns-query.js';
import { canonicalIpv6 } from '../../domain/ip-ranges.js';

export type { RecordType };

export interface DnsRecord {
  type: RecordType;
  /** Owner name, no trailing dot (the CNAME target's name for records reached through a CNAME). */
  name: string;
  /** A/AAAA address; CNAME/NS/MX host (MX: exchange, "." for a null MX); TXT strings joined; SOA "mname rname serial refresh retry expire minimum"; CAA `flags tag "value"` (RFC 8659 §4.1). */
  value: string;
  ttl: number;
  /** MX preference; null for other types. */
  priority: number | null;
}

export interface DnsAnswer {
  rcode: 'NOERROR' | 'NXDOMAIN';
  records: DnsRecord[];
  /**
   * The server set the AD bit (RFC 4035 §3.2.3, RFC 6840 §5.7): a validating resolver vouches that the answer was
   * DNSSEC-authenticated. Only as trustworthy as the path to that resolver. Absent means false.
   */
  authenticated?: boolean;
}

export interface DnsServer {
  host: string;
  port: number;
}

/** Why one exchange with one server failed (internal: never sent to clients). */
class DnsExchangeError extends Error {
  constructor(readonly reason: 'timeout' | 'network' | 'truncated' | 'malformed') {
    super(`DNS exchange failed: ${reason}`);
    this.name = 'DnsExchangeError';
  }
}

/** Advertised EDNS0 UDP payload size (the DNS flag day 2020 recommendation). */
const EDNS_PAYLOAD = 1232;
const MAX_CNAME_CHAIN = 16;

/** A decoded packet; dns-packet decodes the RCODE (as a name such as 'NXDOMAIN') but its types omit it. */
export type DnsResponse = DecodedPacket & { rcode: string };

const decodeResponse = (buf: Buffer): DnsResponse => dnsPacket.decode(buf) as DnsResponse;

const stripDot = (name: string): string => (name.length > 1 && name.endsWith('.') ? name.slice(0, -1) : name);

function buildQuery(name: string, type: RecordType, edns: boolean): { id: number; buf: Buffer } {
  const id = randomInt(0, 0x10000);
  const packet: Packet = {
    type: 'query',
    id,
    // AD in a query asks a validating resolver to report whether the answer was authenticated (RFC 6840 §5.7).
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.AUTHENTIC_DATA,
    questions: [{ type, name, class: 'IN' }],
  };
  if (edns) {
    packet.additionals = [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: EDNS_PAYLOAD,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: 0,
        flag_do: false,
        options: [],
      },
    ];
  }
  return { id, buf: dnsPacket.encode(packet) };
}

/** A response belongs to our query: same id, a response, and the same question (names compared case-insensitively). */
function matches(p: DnsResponse, id: number, name: string, type: RecordType): boolean {
  if (p.type !== 'response' || p.id !== id) return false;
  const qs = p.questions ?? [];
  // Some servers omit the question in error replies; those are failures the caller retries elsewhere anyway.
  if (qs.length === 0) return p.rcode !== 'NOERROR' && p.rcode !== 'NXDOMAIN';
  return qs.length === 1 && qs[0].type === type && qs[0].name.toLowerCase() === name.toLowerCase();
}

function udpExchange(server: DnsServer, name: string, type: RecordType, edns: boolean, timeoutMs: number) {
  const { id, buf } = buildQuery(name, type, edns);
  return new Promise<DnsResponse>((resolve, reject) => {
    const sock = dgram.createSocket(net.isIPv6(server.host) ? 'udp6' : 'udp4');
    let done = false;
    const finish = (err: Error | null, res?: DnsResponse): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        sock.close();
      } catch {
        /* already closed */
      }
      if (err) reject(err);
      else resolve(res as DnsResponse);
    };
    const timer = setTimeout(() => finish(new DnsExchangeError('timeout')), timeoutMs);
    sock.on('error', () => finish(new DnsExchangeError('network')));
    sock.on('message', (msg) => {
      let p: DnsResponse;
      try {
        p = decodeResponse(msg);
      } catch {
        return; // garbage: keep waiting for the real answer
      }
      if (matches(p, id, name, type)) finish(null, p);
    });
    // A connected socket only accepts datagrams from the server and surfaces ICMP unreachable as an error.
    // Bad addresses throw synchronously, inside or outside the callback: a failed exchange, never an uncaught error.
    const send = (): void => {
      try {
        sock.send(buf, (err) => {
          if (err) finish(new DnsExchangeError('network'));
        });
      } catch {
        finish(new DnsExchangeError('network'));
      }
    };
    try {
      sock.connect(server.port, server.host, send);
    } catch {
      finish(new DnsExchangeError('network'));
    }
  });
}

function tcpExchange(server: DnsServer, name: string, type: RecordType, timeoutMs: number) {
  const { id, buf } = buildQuery(name, type, false);
  return new Promise<DnsResponse>((resolve, reject) => {
    const sock = net.connect({ host: server.host, port: server.port });
    let done = false;
    let acc = Buffer.alloc(0);
    const finish = (err: Error | null, res?: DnsResponse): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(res as DnsResponse);
    };
    const timer = setTimeout(() => finish(new DnsExchangeError('timeout')), timeoutMs);
    sock.setNoDelay(true);
    sock.on('error', () => finish(new DnsExchangeError('network')));
    sock.on('close', () => finish(new DnsExchangeError('network')));
    sock.on('connect', () => {
      const framed = Buffer.alloc(2 + buf.length);
      framed.writeUInt16BE(buf.length, 0);
      buf.copy(framed, 2);
      sock.write(framed);
    });
    sock.on('data', (chunk) => {
      acc = Buffer.concat([acc, chunk]);
      if (acc.length < 2 || acc.length < 2 + acc.readUInt16BE(0)) return;
      try {
        const p = decodeResponse(acc.subarray(2, 2 + acc.readUInt16BE(0)));
        finish(matches(p, id, name, type) ? null : new DnsExchangeError('malformed'), p);
      } catch {
        finish(new DnsExchangeError('malformed'));
      }
    });
  });
}

/**
 * One question to one server within timeoutMs: UDP with EDNS0; TCP when the answer is truncated;
 * once more without EDNS when the server answers FORMERR (pre-EDNS servers). Resolves with any rcode.
 */
export async function exchange(server: DnsServer, name: string, type: RecordType, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  const left = (): number => Math.max(1, deadline - performance.now());
  let res = await udpExchange(server, name, type, true, left());
  if (res.rcode === 'FORMERR') res = await udpExchange(server, name, type, false, left());
  if (res.flag_tc) res = await tcpExchange(server, name, type, left());
  if (res.flag_tc) throw new DnsExchangeError('truncated');
  return res;
}

function recordOf(a: Answer, type: RecordType): DnsRecord | null {
  const base = { type, name: stripDot(a.name), ttl: 'ttl' in a && typeof a.ttl === 'number' ? a.ttl : 0 };
  switch (a.type) {
    case 'AAAA':
      // dns-packet shortens the first run of zero groups, RFC 5952 the longest.
      return { ...base, value: canonicalIpv6(String(a.data)) ?? String(a.data), priority: null };
    case 'A':
    case 'CNAME':
    case 'NS':
      return { ...base, value: stripDot(String(a.data)), priority: null };
    case 'MX':
      return { ...base, value: stripDot(a.data.exchange), priority: a.data.preference ?? 0 };
    case 'TXT': {
      const parts = Array.isArray(a.data) ? a.data : [a.data];
      const value = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString('utf8');
      return { ...base, value, priority: null };
    }
    case 'CAA': {
      // Presentation form of RFC 8659 §4.1; the value is quoted, with '"' and '\\' escaped.
      const d = a.data;
      const value = `${d.flags ?? 0} ${d.tag} "${String(d.value ?? '').replace(/["\\]/g, (c) => `\\${c}`)}"`;
      return { ...base, value, priority: null };
    }
    case 'SOA': {
      const d = a.data;
      const value = [stripDot(d.mname), stripDot(d.rname), d.serial, d.refresh, d.retry, d.expire, d.minimum]
        .map((v) => String(v ?? 0))
        .join(' ');
      return { ...base, value, priority: null };
    }
    default:
      return null;
  }
}

/** Negative-caching TTL (RFC 2308 §5): min(SOA TTL, SOA minimum) of the authority SOA; undefined without one. */
function negativeTtl(p: DnsResponse): number | undefined {
  const soa = (p.authorities ?? []).find((a) => a.type === 'SOA');
  if (!soa || soa.type !== 'SOA') return undefined;
  return Math.min(soa.ttl ?? 0, soa.data.minimum ?? 0);
}

/**
 * The records of the asked type that answer the question: owned by the name or by a name reached from it
 * through the answer's CNAME chain (the CNAME records themselves are returned only for CNAME questions).
 * `ttl` is how long the answer may be cached in seconds: the minimum TTL over the records and the CNAMEs
 * used; for NXDOMAIN/NODATA the SOA-derived negative TTL (undefined when the answer carries no SOA).
 * An NXDOMAIN that follows a CNAME of the name is NODATA for the name itself (RFC 6604).
 */
export function toDnsAnswer(p: DnsResponse, name: string, type: RecordType): { answer: DnsAnswer; ttl: number | undefined } {
  const answers = (p.answers ?? []).filter((a) => a.type !== 'OPT' && (!('class' in a) || !a.class || a.class === 'IN'));
  const chain = new Set([name.toLowerCase()]);
  let chainTtl = Infinity;
  let current = name.toLowerCase();
  if (type !== 'CNAME') {
    for (let i = 0; i < MAX_CNAME_CHAIN; i++) {
      const c = answers.find((a) => a.type === 'CNAME' && stripDot(a.name).toLowerCase() === current);
      if (!c || c.type !== 'CNAME') break;
      chainTtl = Math.min(chainTtl, c.ttl ?? 0);
      current = stripDot(String(c.data)).toLowerCase();
      if (chain.has(current)) break;
      chain.add(current);
    }
  }
  const records: DnsRecord[] = [];
  for (const a of answers) {
    if (a.type !== type || !chain.has(stripDot(a.name).toLowerCase())) continue;
    const r = recordOf(a, type);
    if (r) records.push(r);
  }
  // Only an authenticated answer carries the flag (absent means false), so answers compare as before.
  const ad = p.flag_ad === true ? { authenticated: true } : {};
  if (records.length > 0) {
    return { answer: { rcode: 'NOERROR', records, ...ad }, ttl: Math.min(chainTtl, ...records.map((r) => r.ttl)) };
  }
  const rcode = p.rcode === 'NXDOMAIN' && chain.size === 1 ? 'NXDOMAIN' : 'NOERROR';
  return { answer: { rcode, records: [], ...ad }, ttl: negativeTtl(p) };
}
