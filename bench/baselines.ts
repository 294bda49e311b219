// The bench's baselines, one small JSON body on every request (BASELINE=koa: bare Koa, the framework's floor;
// BASELINE=http: bare node:http, Node's): keep-alive as the service's, listen on PORT (127.0.0.1), close every
// connection on SIGTERM.
import { createServer } from 'node:http';
import Koa from 'koa';

const BODY = { bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' };
const TEXT = JSON.stringify(BODY);

const koa = new Koa().use((ctx) => {
  ctx.body = BODY;
});
const server = createServer(
  process.env.BASELINE === 'koa'
    ? koa.callback()
    : (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(TEXT) });
        res.end(TEXT);
      },
);
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
