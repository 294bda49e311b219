// Misbehaving upstreams on 127.0.0.1 for fault tests: a DNS relay (RFC 1035 over UDP/TCP), a TCP relay; the range API is in faulty-range.ts.
//
// Each has a mode that a test switches at run time:
//   DNS relay  'pass' | 'hang' | 'garbage' | 'slow' | 'held'   (in front of test/support/dns-server.ts)
//   range API  'ok' | 'hang' | 'reset' | 'garbage' | 'bad-rows' | 'slow' | 'slow-body' | 'redirect'
//   TCP relay  'pass' | 'hang' | 'stall-mid-handshake' | 'reset' | 'garbage' | 'slow'   (TLS server, Redis)
// 'slow' waits `delayMs` before answering (or, for the TCP relay, before each chunk from upstream); 'held' waits until
// the test calls release() (a state, not a time: what must still be in flight is, however starved the machine).
// close() destroys every socket it holds, so a test can count open handles afterwards.
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { closeServer, listenTcp, Tracked } from './fault-net.js';

export { sha1Hex, unexpectedErrors, watchLeaks } from './fault-net.js';
export { startFaultyRange, type FaultyRange, type RangeFault } from './faulty-range.js';

// ---------------------------------------------------------------------------------------------- DNS

export type DnsFault = 'pass' | 'hang' | 'garbage' | 'slow' | 'held';

export interface FaultyDns {
  port: number;
  mode: DnsFault;
  delayMs: number;
  /** Questions received (UDP and TCP). */
  received(): number;
  /** Lower-cased names asked about, in arrival order. */
  names: string[];
  /** Lets the questions held so far ('held' mode) go on to the upstream; later ones are held again while in that mode. */
  release(): void;
  close(): Promise<void>;
}

/** Garbage that keeps the query id, so a client cannot drop it as someone else's answer. */
function dnsGarbage(query: Buffer): Buffer {
  const junk = randomBytes(12 + (query.length % 40));
  query.copy(junk, 0, 0, 2);
  junk[2] |= 0x80; // QR: a response
  return junk;
}

/** A UDP+TCP relay in front of a real DNS server that can hang, answer garbage or answer late. */
export async function startFaultyDns(upstreamPort: number): Promise<FaultyDns> {
  const tracked = new Tracked();
  const udpUpstreams = new Set<dgram.Socket>();
  let count = 0;
  const names: string[] = [];
  const state = { mode: 'pass' as DnsFault, delayMs: 200 };
  let held: Array<() => void> = [];

  /** One UDP exchange with the upstream; null when it does not answer within 10 s (a deadline for a starved machine). */
  const ask = (msg: Buffer): Promise<Buffer | null> =>
    new Promise((resolve) => {
      const sock = dgram.createSocket('udp4');
      udpUpstreams.add(sock);
      const done = (answer: Buffer | null) => {
        clearTimeout(timer);
        udpUpstreams.delete(sock);
        sock.close();
        resolve(answer);
      };
      const timer = setTimeout(() => done(null), 10_000);
      sock.once('message', (m) => done(m));
      sock.once('error', () => done(null));
      sock.send(msg, upstreamPort, '127.0.0.1');
    });

  const answer = async (msg: Buffer, reply: (b: Buffer) => void): Promise<void> => {
    count++;
    try {
      names.push((dnsPacket.decode(msg).questions?.[0]?.name ?? '').toLowerCase());
    } catch {
      names.push('');
    }
    const mode = state.mode;
    if (mode === 'hang') return;
    if (mode === 'garbage') return reply(dnsGarbage(msg));
    if (mode === 'slow') await new Promise<void>((r) => tracked.later(state.delayMs, r));
    if (mode === 'held') await new Promise<void>((r) => held.push(r));
    const a = await ask(msg);
    if (a) reply(a);
  };

  // Same port number for UDP and TCP, like a real server.
  let udp: dgram.Socket | undefined;
  let port = 0;
  const tcp = net.createServer((sock) => {
    tracked.add(sock);
    let buf = Buffer.alloc(0);
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        void answer(Buffer.from(msg), (out) => {
          if (sock.destroyed) return;
          const framed = Buffer.alloc(2 + out.length);
          framed.writeUInt16BE(out.length, 0);
          out.copy(framed, 2);
          sock.write(framed);
        });
      }
    });
  });
  for (let attempt = 0; attempt < 20 && !udp; attempt++) {
    const u = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      u.once('error', reject);
      u.bind(0, '127.0.0.1', () => resolve());
    });
    port = u.address().port;
    const ok = await listenTcp(tcp, port).then(
      () => true,
      () => false,
    );
    if (ok) udp = u;
    else await new Promise<void>((r) => u.close(() => r()));
  }
  if (!udp) throw new Error('could not bind the faulty DNS relay');
  const udpSocket = udp;
  udpSocket.on('message', (msg, rinfo) => {
    void answer(msg, (out) => udpSocket.send(out, rinfo.port, rinfo.address));
  });

  // The fault settings are the returned object's own fields: tests flip `mode` and `delayMs` on it.
  return Object.assign(state, {
    port,
    received: () => count,
    names,
    release() {
      const waiting = held;
      held = [];
      for (const go of waiting) go();
    },
    async close() {
      tracked.destroyAll();
      for (const s of udpUpstreams) s.close();
      udpUpstreams.clear();
      await Promise.all([new Promise<void>((r) => udpSocket.close(() => r())), closeServer(tcp)]);
    },
  });
}

// ---------------------------------------------------------------------------------------- TCP relay

export type TcpFault = 'pass' | 'hang' | 'stall-mid-handshake' | 'reset' | 'garbage' | 'slow';

export interface FaultyTcp {
  port: number;
  mode: TcpFault;
  delayMs: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Drop every connection in progress (a crash of the upstream as seen by its clients). */
  resetAll(): void;
  /** Stop relaying on the connections already open (a hung upstream), until thaw(). */
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

/** A TCP relay to 127.0.0.1:upstreamPort whose mode applies to connections accepted from then on. */
export async function startFaultyTcp(upstreamPort: number): Promise<FaultyTcp> {
  const tracked = new Tracked();
  let count = 0;
  const state = { mode: 'pass' as TcpFault, delayMs: 100 };

  const server = net.createServer((client) => {
    count++;
    tracked.add(client);
    const mode = state.mode;
    if (mode === 'hang') return void client.resume();
    if (mode === 'reset') return void client.once('data', () => client.resetAndDestroy());
    if (mode === 'garbage') return void client.once('data', () => client.end(randomBytes(200)));

    const upstream = tracked.add(net.connect(upstreamPort, '127.0.0.1'));
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.on('data', (d) => upstream.write(d));
    let firstFromUpstream = true;
    upstream.on('data', (d) => {
      if (mode === 'stall-mid-handshake') {
        // Forward only part of the server's first flight (ServerHello...), then nothing: the handshake stalls.
        if (firstFromUpstream) client.write(d.subarray(0, Math.min(20, d.length)));
        firstFromUpstream = false;
        return;
      }
      if (mode === 'slow') {
        upstream.pause();
        tracked.later(state.delayMs, () => {
          if (!client.destroyed) client.write(d);
          upstream.resume();
        });
        return;
      }
      client.write(d);
    });
  });
  const port = await listenTcp(server);
  // The fault settings are the returned object's own fields: tests flip `mode` and `delayMs` on it.
  return Object.assign(state, {
    port,
    connections: () => count,
    resetAll: () => {
      for (const s of tracked.sockets) s.resetAndDestroy();
    },
    freeze: () => {
      for (const s of tracked.sockets) s.pause();
    },
    thaw: () => {
      for (const s of tracked.sockets) s.resume();
    },
    async close() {
      tracked.destroyAll();
      await closeServer(server);
    },
  });
}
