// A minimal SOCKS5 proxy (RFC 1928: no authentication, CONNECT only) on 127.0.0.1 for tests of SMTP_PROXY. It records
// each destination asked for and connects only to loopback ones: tests never reach beyond the machine.
import net from 'node:net';

export interface Socks5Fixture {
  port: number;
  /** Every CONNECT destination, `host:port`, in order. */
  connects: string[];
  close(): Promise<void>;
}

/** `refuseAll`: answer every CONNECT "not allowed by ruleset" (RFC 1928 reply 2), as a proxy refusing this client does. */
export async function startSocks5Server(opts: { refuseAll?: boolean } = {}): Promise<Socks5Fixture> {
  const connects: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'piping' = 'greeting';
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting') {
        if (buffer.length < 2 || buffer.length < 2 + buffer[1]) return;
        const methods = buffer.subarray(2, 2 + buffer[1]);
        buffer = buffer.subarray(2 + buffer[1]);
        if (buffer.length === 0 && !methods.includes(0)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, 0])); // version 5, no authentication
        stage = 'request';
      }
      if (stage === 'request') {
        if (buffer.length < 5) return;
        const atyp = buffer[3];
        const len = atyp === 1 ? 4 : atyp === 4 ? 16 : atyp === 3 ? 1 + buffer[4] : -1;
        if (len < 0 || buffer[1] !== 1) return void client.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]));
        if (buffer.length < 4 + len + 2) return;
        const raw = buffer.subarray(4, 4 + len);
        const host = atyp === 1 ? [...raw].join('.') : atyp === 3 ? raw.subarray(1).toString('latin1') : raw.toString('hex').match(/.{4}/g)!.join(':');
        const port = buffer.readUInt16BE(4 + len);
        const rest = buffer.subarray(4 + len + 2);
        connects.push(`${host}:${port}`);
        stage = 'piping';
        client.off('data', onData);
        client.pause();
        const loopback = /^127\./.test(host) || host === '0000:0000:0000:0000:0000:0000:0000:0001';
        if (!loopback || opts.refuseAll) return void client.end(Buffer.from([5, 2, 0, 1, 0, 0, 0, 0, 0, 0])); // not allowed by ruleset
        const upstream = net.connect({ host, port });
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.once('connect', () => {
          client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
          if (rest.length > 0) upstream.write(rest);
          client.pipe(upstream);
          upstream.pipe(client);
          client.resume();
        });
        upstream.on('error', () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]))); // connection refused
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connects,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
