// The lifecycle every bench baseline server shares: keep-alive as the service's, listen on PORT (127.0.0.1), print
// {"port":N} for bench/processes.ts, close every connection on SIGTERM.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export function serveBaseline(server: Server): void {
  server.keepAliveTimeout = 5_000;
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
