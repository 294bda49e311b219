// METRICS_PORT: /metrics on its own port (same HOST) for deployments that keep it private, and then not on PORT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

let server: ServerProcess;
let metricsPort: number;

beforeAll(async () => {
  server = await startServerProcess({ env: { METRICS_PORT: '0' } });
  const m = /metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(server.output());
  if (!m) throw new Error(`no metrics address printed: ${server.output()}`);
  metricsPort = Number(m[1]);
});
afterAll(async () => {
  await server?.stop();
});

describe('METRICS_PORT set', () => {
  it('serves /metrics on METRICS_PORT', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toMatch(/^# TYPE http_requests_total counter$/m);
  });

  it('answers 404 ErrorInfo for /metrics on PORT', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND', path: '/metrics' });
  });

  it('serves nothing else on METRICS_PORT: 404 ErrorInfo for the API and the other system routes', async () => {
    for (const path of ['/healthz', '/openapi.json', '/api/v1/bic/DEUTDEFF']) {
      const res = await fetch(`http://127.0.0.1:${metricsPort}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND', path });
    }
  });

  it('answers 405 ErrorInfo with Allow for another method on METRICS_PORT', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const body = await res.json();
    expect(body.code).toBe('METHOD_NOT_ALLOWED');
    expect(body.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('keeps serving the API on PORT', async () => {
    expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
  });

  it('drains both ports on SIGTERM and exits 0', async () => {
    expect(await server.stop()).toBe(0);
  });
});
