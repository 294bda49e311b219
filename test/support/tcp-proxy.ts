// A TCP proxy on 127.0.0.1 for network faults between a client and a real server that keeps its data.
//
// Usage:
//   const proxy = await startTcpProxy(redis.port);    // connect the client to proxy.port
//   proxy.cut();     proxy.restore();                 // connections dropped and refused, then accepted again
//   proxy.pause();   proxy.resume();                  // a hung server: client bytes held, then delivered in order
//   await proxy.close();
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Destroy every open connection and close new ones at once, until restore(). */
  cut(): void;
  restore(): void;
  /** Keep connections open but hold what clients send (in order), as a server that stopped reading. */
  pause(): void;
  /** Deliver what was held, then forward as before. */
  resume(): void;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  server: net.Socket;
  held: Buffer[];
}

export function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let refusing = false;
  let paused = false;

  const drop = (p: Pair): void => {
    pairs.delete(p);
    p.client.destroy();
    p.server.destroy();
  };

  const listener = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const p: Pair = { client, server: net.connect(targetPort, targetHost), held: [] };
    pairs.add(p);
    client.on('data', (chunk: Buffer) => {
      if (paused) p.held.push(chunk);
      else p.server.write(chunk);
    });
    p.server.on('data', (chunk: Buffer) => client.write(chunk));
    for (const s of [client, p.server]) {
      s.on('close', () => drop(p));
      s.on('error', () => drop(p));
    }
  });

  return new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => {
      resolve({
        port: (listener.address() as net.AddressInfo).port,
        cut() {
          refusing = true;
          for (const p of [...pairs]) drop(p);
        },
        restore() {
          refusing = false;
        },
        pause() {
          paused = true;
        },
        resume() {
          paused = false;
          for (const p of pairs) for (const chunk of p.held.splice(0)) p.server.write(chunk);
        },
        close() {
          for (const p of [...pairs]) drop(p);
          return new Promise((done) => listener.close(() => done()));
        },
      });
    });
  });
}
