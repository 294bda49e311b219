// A real authoritative DNS test server (RFC 1035 over UDP and TCP on 127.0.0.1) serving an in-memory zone.
//
// Usage:
//   const dns = await startDnsServer({
//     'example.test': [
//       { type: 'A', data: '192.0.2.1', ttl: 300 },
//       { type: 'MX', data: { preference: 10, exchange: 'mx.example.test' } },
//       { type: 'TXT', data: 'v=spf1 -all' },                       // or string[] (character-strings)
//       { type: 'SOA', data: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', minimum: 60 } },
//     ],
//     'www.example.test': [{ type: 'CNAME', data: 'example.test' }],
//   });
//   createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 500 });
//   dns.queries  // every query received, in order: { name, type, transport }
//   dns.setMode('silent'); dns.set('new.example.test', [...]); await dns.close();
//
// Behaviour (per question):
// - records of the asked type at the name → NOERROR with them (TTL = record ttl ?? opts.defaultTtl);
// - else a CNAME at the name (and type ≠ CNAME) → the CNAME, followed through the zone (≤ 8 steps);
// - else the name exists (has records, or is a parent of a name that has) → NOERROR NODATA;
// - else NXDOMAIN. Negative answers carry the closest enclosing SOA (RFC 2308) in the authority section.
// - Over UDP a response larger than max(512, the query's EDNS payload size) is sent truncated (TC set,
//   no answers), like a real server; over TCP it is sent whole.
// Modes (opts.mode or setMode): 'normal'; 'silent' (never answers, UDP or TCP); 'servfail'; 'refused';
// 'truncate' (every UDP answer has TC set and no records, forcing TCP; TCP answers normally);
// 'wrong-id' (answers with a different query id) and 'wrong-question' (answers another name), both of
// which a client must ignore. Queries are recorded in every mode.
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet, Question } from 'dns-packet';

export interface SoaRecordData {
  mname: string;
  rname: string;
  serial?: number;
  refresh?: number;
  retry?: number;
  expire?: number;
  minimum?: number;
}

export type ZoneRecord = { ttl?: number } & (
  | { type: 'A' | 'AAAA' | 'CNAME' | 'NS' | 'PTR'; data: string }
  | { type: 'MX'; data: { preference: number; exchange: string } }
  /** One string, or several character-strings; strings over 255 bytes are split into 255-byte chunks. */
  | { type: 'TXT'; data: string | string[] }
  | { type: 'SOA'; data: SoaRecordData }
  /** RFC 8659: flags 128 marks the tag critical. */
  | { type: 'CAA'; data: { flags?: number; tag: string; value: string } }
);

/** Owner name (case-insensitive, no trailing dot) → its records. */
export type Zone = Record<string, ZoneRecord[]>;

export type DnsServerMode = 'normal' | 'silent' | 'servfail' | 'refused' | 'truncate' | 'wrong-id' | 'wrong-question';

export interface DnsServerOptions {
  mode?: DnsServerMode;
  /** TTL for records without one; default 300. */
  defaultTtl?: number;
  /** Names (and their subdomains) whose answers carry the AD bit, as a validating resolver sets it (RFC 4035 §3.2.3). */
  authenticated?: string[];
}

export interface ReceivedQuery {
  /** Lower-cased, no trailing dot. */
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
  /** The query's message id. */
  id: number;
}

export interface TestDnsServer {
  host: '127.0.0.1';
  port: number;
  /** Every query received, in arrival order (a live array; tests may reset it with `queries.length = 0`). */
  queries: ReceivedQuery[];
  setMode(mode: DnsServerMode): void;
  /** Replace (or with [] remove) the records of one name. */
  set(name: string, records: ZoneRecord[]): void;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
const MAX_CNAME_STEPS = 8;

const norm = (name: string): string => name.toLowerCase().replace(/\.$/, '');

function chunkTxt(data: string | string[]): Buffer[] {
  const out: Buffer[] = [];
  for (const s of Array.isArray(data) ? data : [data]) {
    const b = Buffer.from(s, 'utf8');
    if (b.length === 0) out.push(b);
    for (let i = 0; i < b.length; i += 255) out.push(b.subarray(i, i + 255));
  }
  return out;
}

function toAnswer(name: string, r: ZoneRecord, defaultTtl: number): Answer {
  const ttl = r.ttl ?? defaultTtl;
  switch (r.type) {
    case 'TXT':
      return { type: 'TXT', name, ttl, class: 'IN', data: chunkTxt(r.data) };
    case 'MX':
      return { type: 'MX', name, ttl, class: 'IN', data: { ...r.data } };
    case 'CAA':
      return { type: 'CAA', name, ttl, class: 'IN', data: { flags: r.data.flags ?? 0, tag: r.data.tag as 'issue', value: r.data.value } };
    case 'SOA':
      return {
        type: 'SOA',
        name,
        ttl,
        class: 'IN',
        data: { serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60, ...r.data },
      };
    default:
      return { type: r.type, name, ttl, class: 'IN', data: r.data };
  }
}

export async function startDnsServer(zone: Zone, opts: DnsServerOptions = {}): Promise<TestDnsServer> {
  const records = new Map<string, ZoneRecord[]>();
  for (const [name, rs] of Object.entries(zone)) records.set(norm(name), rs);
  const defaultTtl = opts.defaultTtl ?? 300;
  let mode: DnsServerMode = opts.mode ?? 'normal';
  const queries: ReceivedQuery[] = [];

  const exists = (name: string): boolean => {
    if ((records.get(name)?.length ?? 0) > 0) return true;
    for (const [k, rs] of records) if (rs.length > 0 && k.endsWith(`.${name}`)) return true;
    return false;
  };

  const closestSoa = (name: string): Answer[] => {
    const labels = name.split('.');
    for (let i = 0; i < labels.length; i++) {
      const owner = labels.slice(i).join('.');
      const soa = records.get(owner)?.find((r) => r.type === 'SOA');
      if (soa) return [toAnswer(owner, soa, defaultTtl)];
    }
    return [];
  };

  /** The answer packet for one query (before transport-specific truncation). */
  const respond = (query: DecodedPacket): Packet => {
    const q: Question | undefined = query.questions?.[0];
    const base = {
      type: 'response' as const,
      id: mode === 'wrong-id' ? ((query.id ?? 0) + 1) & 0xffff : query.id,
      questions: q ? [mode === 'wrong-question' ? { ...q, name: `other.${q.name}` } : q] : [],
    };
    const qname = q ? norm(q.name) : '';
    const ad = (opts.authenticated ?? []).some((n) => qname === norm(n) || qname.endsWith(`.${norm(n)}`));
    const flags = dnsPacket.AUTHORITATIVE_ANSWER | (query.flag_rd ? dnsPacket.RECURSION_DESIRED : 0) | (ad ? dnsPacket.AUTHENTIC_DATA : 0);
    if (mode === 'servfail') return { ...base, flags: flags | RCODE.SERVFAIL };
    if (mode === 'refused' || !q) return { ...base, flags: flags | RCODE.REFUSED };

    const answers: Answer[] = [];
    let name = norm(q.name);
    for (let step = 0; step <= MAX_CNAME_STEPS; step++) {
      const here = records.get(name) ?? [];
      const matching = here.filter((r) => r.type === q.type);
      if (matching.length > 0) {
        answers.push(...matching.map((r) => toAnswer(name, r, defaultTtl)));
        return { ...base, flags, answers };
      }
      const cname = q.type === 'CNAME' ? undefined : here.find((r) => r.type === 'CNAME');
      if (!cname || typeof cname.data !== 'string') break;
      answers.push(toAnswer(name, cname, defaultTtl));
      name = norm(cname.data);
    }
    const rcode = exists(name) ? RCODE.NOERROR : RCODE.NXDOMAIN;
    return { ...base, flags: flags | rcode, answers, authorities: closestSoa(name) };
  };

  const handle = (msg: Buffer, transport: 'udp' | 'tcp'): Buffer | null => {
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return null;
    }
    const q = query.questions?.[0];
    queries.push({ name: q ? norm(q.name) : '', type: q ? String(q.type) : '', transport, id: query.id ?? 0 });
    if (mode === 'silent') return null;
    const reply = respond(query);
    if (transport === 'tcp') return dnsPacket.encode(reply);
    const opt = query.additionals?.find((a) => a.type === 'OPT');
    const limit = Math.max(512, opt && 'udpPayloadSize' in opt ? opt.udpPayloadSize : 0);
    const encoded = dnsPacket.encode(reply);
    if (mode !== 'truncate' && encoded.length <= limit) return encoded;
    return dnsPacket.encode({
      type: 'response',
      id: reply.id,
      flags: (reply.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE,
      questions: reply.questions,
    });
  };

  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => sock.destroy());
    let buf = Buffer.alloc(0);
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const len = buf.readUInt16BE(0);
        const out = handle(buf.subarray(2, 2 + len), 'tcp');
        buf = buf.subarray(2 + len);
        if (out) {
          const framed = Buffer.alloc(2 + out.length);
          framed.writeUInt16BE(out.length, 0);
          out.copy(framed, 2);
          sock.write(framed);
        }
      }
    });
  });

  // Bind TCP on an ephemeral port, then UDP on the same number. When a UDP socket already holds that number
  // (EADDRINUSE), give the TCP port back and take another: no cap on those retries, each is a fresh port from the
  // kernel (the suite's hook timeout bounds the whole). Any other error fails at once.
  let udp: dgram.Socket | undefined;
  let port = 0;
  while (!udp) {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(0, '127.0.0.1', () => {
        tcp.off('error', reject);
        resolve();
      });
    });
    port = (tcp.address() as net.AddressInfo).port;
    const u = dgram.createSocket('udp4');
    const failed = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      u.once('error', resolve);
      u.bind(port, '127.0.0.1', () => {
        u.off('error', resolve);
        resolve(null);
      });
    });
    if (!failed) {
      udp = u;
      break;
    }
    u.close();
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if (failed.code !== 'EADDRINUSE') throw failed;
  }
  const udpSocket = udp;
  udpSocket.on('message', (msg, rinfo) => {
    const out = handle(msg, 'udp');
    if (out) udpSocket.send(out, rinfo.port, rinfo.address);
  });

  return {
    host: '127.0.0.1',
    port,
    queries,
    setMode: (m) => {
      mode = m;
    },
    set: (name, rs) => {
      records.set(norm(name), rs);
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udpSocket.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}
