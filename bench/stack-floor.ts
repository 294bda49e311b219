// Bench only: the designed stack with nothing of the service's own on it (issue #26's prototype): Koa, koa-body,
// openapi-backend's handleRequest set up as the service sets it up (createBackend: precompiled router, request
// validator), an ApiKey handler that admits any key, fixed answers written by Koa. What BIC and card can reach on this
// stack before keys, limits, header fields, request ids, logs and metrics; bench/body-cost.ts --stack runs it.
import { createServer } from 'node:http';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Context } from 'openapi-backend';
import { createBackend } from '../src/http/api.js';
import { loadSpec } from '../src/http/spec.js';
import { serveBaseline } from './baseline-server.js';

interface Answer {
  status: number;
  body: unknown;
}

const BIC = { bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' };
const CARD = { valid: true, luhnValid: true, cardBrand: 'Visa', lastFourDigits: '5677', cardType: 'CREDIT', issuingBank: null, cardCountry: 'US', cardCategory: null };
const refused = (status: number) => (): Answer => ({ status, body: { code: 'REFUSED' } });

const { api } = createBackend((await loadSpec()).document);
api.registerSecurityHandler('ApiKey', (c: Context) => typeof c.request.headers['x-api-key'] === 'string');
api.register({
  validateBic: (): Answer => ({ status: 200, body: BIC }),
  validateCard: (): Answer => ({ status: 200, body: CARD }),
  notFound: refused(404),
  methodNotAllowed: refused(405),
  unauthorizedHandler: refused(401),
  validationFail: refused(400),
});

const app = new Koa();
app.use(koaBody({ json: true, urlencoded: false, text: false, multipart: false, jsonStrict: true, jsonLimit: 16 * 1024, jsonTypes: ['application/json'] }));
app.use(async (ctx) => {
  if (ctx.path === '/') {
    ctx.body = { ready: true };
    return;
  }
  const request = { method: ctx.method, path: ctx.path, headers: ctx.req.headers as Record<string, string>, query: ctx.query as Record<string, string>, body: ctx.request.body };
  const answer = (await api.handleRequest(request, ctx)) as Answer;
  ctx.status = answer.status;
  ctx.body = answer.body;
});
const server = createServer(app.callback());
serveBaseline(server);
