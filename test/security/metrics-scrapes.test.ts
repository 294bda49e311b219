// GET /metrics is open and costs ~20x an API request: at most one render a second, shared by concurrent scrapes.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { createMetrics, type Metrics } from '../../src/http/metrics.js';
import { createHttpServer, listen } from '../../src/server.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let metrics: Metrics;
let server: Server;
let base: string;
let renders: ReturnType<typeof vi.spyOn>;

beforeAll(async () => {
  h = await startHarness();
  // The production default: the harness's own metrics render on every scrape so that tests read fresh counts.
  metrics = createMetrics({ defaults: false });
  renders = vi.spyOn(metrics.registry, 'metrics');
  server = createHttpServer(await createApp({ ...h.composition.deps, metrics }));
  await listen(server, 0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await h.close();
});

const scrape = async () => {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GET /metrics under a flood of scrapes', () => {
  it('shares one render among concurrent scrapes', async () => {
    await sleep(1100);
    renders.mockClear();
    const texts = await Promise.all(Array.from({ length: 20 }, () => metrics.render()));
    expect(renders).toHaveBeenCalledTimes(1);
    expect(new Set(texts).size).toBe(1);
  });

  it('renders at most once a second under a flood of scrapes over HTTP', async () => {
    await sleep(1100);
    renders.mockClear();
    const started = performance.now();
    let left = 60;
    const worker = async () => {
      while (left-- > 0) await scrape();
    };
    await Promise.all(Array.from({ length: 10 }, worker));
    const seconds = (performance.now() - started) / 1000;
    expect(renders.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(renders.mock.calls.length).toBeLessThanOrEqual(1 + Math.floor(seconds));
  });

  it('serves the cached text to scrapes within the same second', async () => {
    await sleep(1100);
    renders.mockClear();
    // The render ends after t0: a scrape answered before t0 + 1 s arrived within a second of it.
    const t0 = performance.now();
    const first = await scrape();
    let checked = 0;
    let rendersMeanwhile = 0;
    for (let i = 0; i < 10; i++) {
      const text = await scrape();
      if (performance.now() - t0 >= 1000) break;
      expect(text).toBe(first);
      checked++;
      rendersMeanwhile = renders.mock.calls.length;
    }
    expect(checked).toBeGreaterThan(0);
    expect(rendersMeanwhile).toBe(1);
  });

  it('renders again once the text is a second old: a request counted meanwhile shows', async () => {
    await sleep(1100);
    const t0 = performance.now();
    await scrape();
    expect((await fetch(`${base}/api/v1/bic/DEUTDEFF`, { headers: { 'X-Api-Key': h.key } })).status).toBe(200);
    const cached = await scrape();
    // Within the second the text is the one rendered before the request (a loaded machine may take longer).
    if (performance.now() - t0 < 1000) expect(cached).not.toMatch(/http_requests_total\{operationId="validateBic",status="200"\}/);
    await sleep(1100);
    expect(await scrape()).toMatch(/http_requests_total\{operationId="validateBic",status="200"\} 1$/m);
  });
});
