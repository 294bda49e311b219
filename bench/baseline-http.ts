// Baseline: bare node:http answering one fixed small JSON body (the Node limit for the bench); prints {"port":N}.
import { createServer } from 'node:http';
import { serveBaseline } from './baseline-server.js';

const BODY = JSON.stringify({ bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' });

const server = createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(BODY) });
  res.end(BODY);
});
serveBaseline(server);
