// An app behind the production HTTP server (src/server.ts) on 127.0.0.1 at a free port, and its closing: for the
// harness and the files whose subject is the connection itself.
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer, listen, type ServerLimits } from '../../src/server.js';

export interface Listening {
  server: Server;
  port: number;
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Ends every connection, then the server. */
  close(): Promise<void>;
}

export async function listenOnLoopback(app: { callback(): RequestListener }, limits: Partial<ServerLimits> = {}): Promise<Listening> {
  const server = createHttpServer(app, limits);
  await listen(server, 0, '127.0.0.1');
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
