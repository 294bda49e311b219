// Baseline: bare node:http answering one fixed small JSON body (the Node limit for the bench); prints {"port":N}.
import { createServer } from 'node:http';
import { serveBaseline } from './baseline-server.js';

const BODY = JSON.stringify({ bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' });

/** LIMIT_HEADERS=1 (bench/header-cost.ts): also the five limit headers the service sends, with a bench key's values. */
const LIMIT_HEADERS: Record<string, string> =
  process.env.LIMIT_HEADERS === '1'
    ? {
        'ratelimit-limit': '1000000000',
        'ratelimit-remaining': '999987654',
        'ratelimit-reset': '37',
        'x-quota-daily-remaining': '999876543',
        'x-quota-monthly-remaining': '999876543',
      }
    : {};

const server = createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(BODY), ...LIMIT_HEADERS });
  res.end(BODY);
});
serveBaseline(server);
