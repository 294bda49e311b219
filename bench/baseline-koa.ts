// Baseline: bare Koa answering one fixed small JSON body (the framework baseline for the bench); prints {"port":N}.
// KOA_BODY=1 (bench/body-cost.ts): POST bodies are read through koa-body first, the idiomatic Koa way (as the service
// does, src/http/json-body.ts).
import { createServer } from 'node:http';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { serveBaseline } from './baseline-server.js';

const BODY = { bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' };

const app = new Koa();
if (process.env.KOA_BODY === '1') {
  app.use(koaBody({ json: true, urlencoded: false, text: false, multipart: false, jsonStrict: true, jsonTypes: ['application/json'] }));
}
app.use((ctx) => {
  ctx.body = BODY;
});
const server = createServer(app.callback());
serveBaseline(server);
