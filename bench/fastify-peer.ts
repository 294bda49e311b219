// The peer in the bench: the contract-first Fastify 5 service a user might build instead (issue #48), on Fastify's
// defaults plus what the contract asks of every API route (BENCHMARKS.md, "The peer on Fastify's defaults"). Only
// validateBic is implemented (the service's own domain function); every other operation answers 501.
// Env: PORT, PEER_API_KEY (the one key it knows).
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import rateLimit from '@fastify/rate-limit';
import { validateBic } from '../src/domain/bic.js';
import { ROOT } from './processes.js';

const key = process.env.PEER_API_KEY;
if (!key) throw new Error('PEER_API_KEY is required');
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
/** The key store: key hash -> record, as a user's service would hold it after loading it. */
const keys = new Map<string, { id: string; perMinute: number }>([[sha256(key), { id: 'bench', perMinute: 1_000_000_000 }]]);

// One option beyond the defaults: openapi.yaml carries x-* keywords Fastify's Ajv refuses in strict mode.
const app = Fastify({ logger: true, ajv: { customOptions: { strict: false } } });

type Keyed = FastifyRequest & { keyId?: string; perMinute?: number };
/** A refusal as the contract's ErrorInfo (openapi.yaml), which Fastify serialises with the response schema glue gave the route. */
const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, code: string, message: string, requestId: string | null = request.id) =>
  reply.code(status).send({
    requestId,
    path: request.url.split('?')[0],
    status,
    code,
    message,
    error: message,
    details: [] as Array<{ field: string; message: string }>,
  });

// Fastify's own refusals (a request its Ajv rejects, a 429 of the rate limiter) as ErrorInfo.
app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown }, request, reply) => {
  const status = err.statusCode ?? 500;
  const code = err.validation ? 'INVALID_FORMAT' : status === 429 ? 'RATE_LIMIT_EXCEEDED' : status < 500 ? 'VALIDATION_ERROR' : 'INTERNAL_ERROR';
  return refuse(request, reply, err.validation ? 400 : status, code, err.message);
});

app.addHook('onRequest', async (request: Keyed, reply) => {
  reply.header('x-request-id', request.id);
  if (!request.url.startsWith('/api/')) return;
  const presented = request.headers['x-api-key'];
  if (typeof presented !== 'string' || presented === '') {
    reply.header('www-authenticate', 'ApiKey header="X-Api-Key"');
    return refuse(request, reply, 401, 'UNAUTHORIZED', 'the X-Api-Key header is missing', null);
  }
  const record = keys.get(sha256(presented));
  if (!record) return refuse(request, reply, 403, 'FORBIDDEN', 'the API key is invalid, inactive or revoked', request.id);
  request.keyId = record.id;
  request.perMinute = record.perMinute;
});

await app.register(rateLimit, {
  global: true,
  max: (request: Keyed) => request.perMinute ?? 60,
  timeWindow: 60_000,
  keyGenerator: (request: Keyed) => request.keyId ?? request.ip,
  // RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (the IETF draft's names, as the service sends them).
  enableDraftSpec: true,
  allowList: (request: Keyed) => !request.url.startsWith('/api/'),
});

const notImplemented = (operationId: string) => async (request: FastifyRequest, reply: FastifyReply) =>
  refuse(request, reply, 501, 'NOT_IMPLEMENTED', `${operationId} is not part of the peer`);

await app.register(openapiGlue, {
  specification: join(ROOT, 'openapi.yaml'),
  operationResolver: (operationId: string) =>
    operationId === 'validateBic'
      ? async (request: FastifyRequest) => validateBic((request.params as { bic: string }).bic)
      : notImplemented(operationId),
});

// Readiness for bench/processes.ts (startService polls `/`), outside the contract.
app.get('/', async () => ({ ok: true }));

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.on('SIGTERM', () => {
  app.server.closeAllConnections();
  void app.close().then(() => process.exit(0));
});
