// The test DNS server's UDP+TCP port pair (RFC 1035 section 4.2: one port number, both transports): found however often a number is taken.
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startDnsServer } from '../support/dns-server.js';

const createSocket = dgram.createSocket.bind(dgram);
const squatters: dgram.Socket[] = [];
/** The port numbers taken from the server before it asked for them. */
const taken: number[] = [];

afterEach(() => {
  vi.restoreAllMocks();
  taken.length = 0;
  for (const s of squatters.splice(0)) {
    try {
      s.close();
    } catch {
      // A squatter whose own bind failed (the number was held elsewhere) has nothing to close.
    }
  }
});

/**
 * The first `count` UDP sockets the server creates find their port already held by another UDP socket (a real
 * EADDRINUSE from the kernel): a squatter binds the number first, whichever number the server asks for. When the
 * number is already held elsewhere (another test's socket), the squatter's bind fails and the server's fails the
 * same way: the number is taken either way.
 */
function takeTheFirstUdpPorts(count: number): void {
  let created = 0;
  vi.spyOn(dgram, 'createSocket').mockImplementation(((...args: Parameters<typeof dgram.createSocket>) => {
    const socket = createSocket(...args);
    if (created++ >= count) return socket;
    const bind = socket.bind.bind(socket) as (port: number, address: string, cb: () => void) => dgram.Socket;
    socket.bind = ((port: number, address: string, cb: () => void) => {
      const squatter = createSocket('udp4');
      squatters.push(squatter);
      taken.push(port);
      squatter.once('error', () => bind(port, address, cb));
      squatter.bind(port, address, () => bind(port, address, cb));
      return socket;
    }) as typeof socket.bind;
    return socket;
  }) as typeof dgram.createSocket);
}

async function askUdp(port: number): Promise<number> {
  const client = createSocket('udp4');
  try {
    const reply = new Promise<Buffer>((resolve) => client.once('message', resolve));
    client.send(dnsPacket.encode({ type: 'query', id: 7, questions: [{ type: 'A', name: 'a.test' }] }), port, '127.0.0.1');
    return dnsPacket.decode(await reply).answers?.length ?? -1;
  } finally {
    client.close();
  }
}

async function askTcp(port: number): Promise<number> {
  const query = dnsPacket.streamEncode({ type: 'query', id: 8, questions: [{ type: 'A', name: 'a.test' }] });
  const sock = net.connect(port, '127.0.0.1');
  try {
    const reply = await new Promise<Buffer>((resolve, reject) => {
      let buf = Buffer.alloc(0);
      sock.on('error', reject);
      sock.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) resolve(buf);
      });
      sock.write(query);
    });
    return dnsPacket.streamDecode(reply).answers?.length ?? -1;
  } finally {
    sock.destroy();
  }
}

describe('startDnsServer port pair', () => {
  it('answers on one port number over UDP and TCP', async () => {
    const dns = await startDnsServer({ 'a.test': [{ type: 'A', data: '192.0.2.1' }] });
    try {
      expect(await askUdp(dns.port)).toBe(1);
      expect(await askTcp(dns.port)).toBe(1);
    } finally {
      await dns.close();
    }
  });

  it('keeps trying when the number is taken on UDP, more often than a small cap would allow', async () => {
    takeTheFirstUdpPorts(30);
    const dns = await startDnsServer({ 'a.test': [{ type: 'A', data: '192.0.2.1' }] });
    try {
      expect(taken).toHaveLength(30);
      expect(taken).not.toContain(dns.port);
      expect(await askUdp(dns.port)).toBe(1);
      expect(await askTcp(dns.port)).toBe(1);
    } finally {
      await dns.close();
    }
  });

  it('fails at once on any other bind error, leaving no port open', async () => {
    let tcpPort = 0;
    let binds = 0;
    vi.spyOn(dgram, 'createSocket').mockImplementation(((...args: Parameters<typeof dgram.createSocket>) => {
      const socket = createSocket(...args);
      socket.bind = ((port: number) => {
        binds++;
        tcpPort = port;
        process.nextTick(() => socket.emit('error', Object.assign(new Error('bind EACCES'), { code: 'EACCES' })));
        return socket;
      }) as typeof socket.bind;
      return socket;
    }) as typeof dgram.createSocket);
    await expect(startDnsServer({})).rejects.toMatchObject({ code: 'EACCES' });
    expect(binds).toBe(1);
    expect(tcpPort).toBeGreaterThan(0);
    const probe = net.connect(tcpPort, '127.0.0.1');
    const refused = await new Promise<string>((resolve) => {
      probe.once('connect', () => resolve('connected'));
      probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    probe.destroy();
    expect(refused).toBe('ECONNREFUSED');
  });
});
