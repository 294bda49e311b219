// Baseline: bare Koa answering one fixed small JSON body (the framework baseline for the bench); prints {"port":N}.
import { createServer } from 'node:http';
import Koa from 'koa';
import { serveBaseline } from './baseline-server.js';

const BODY = { bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' };

const app = new Koa();
app.use((ctx) => {
  ctx.body = BODY;
});
const server = createServer(app.callback());
serveBaseline(server);
