// GET /metrics is open and costs ~20x an API request: at most one render a second, shared by concurrent scrapes.
// In-process (the subject is the render throttle, not the socket), on a fake performance clock: each test moves the
// clock itself instead of sleeping through the one-second window.
import type { RequestListener } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { createMetrics, METRICS_RENDER_INTERVAL_MS, type Metrics } from '../../src/http/metrics.js';
import { startHarness, type Harness } from '../support/harness.js';
import { inject } from '../support/inject.js';

let h: Harness;
let metrics: Metrics;
let listener: RequestListener;
let renders: ReturnType<typeof vi.spyOn>;

beforeAll(async () => {
  h = await startHarness();
  // The production default: the harness's own metrics render on every scrape so that tests read fresh counts.
  metrics = createMetrics({ defaults: false });
  renders = vi.spyOn(metrics.registry, 'metrics');
  listener = (await createApp({ ...h.composition.deps, metrics })).callback();
});
afterAll(() => h.close());

// Only performance.now() (the throttle's clock) is fake, one clock for the whole file: the requests' own timers
// and I/O run as usual.
beforeAll(() => {
  vi.useFakeTimers({ toFake: ['performance'] });
});
afterAll(() => {
  vi.useRealTimers();
});
beforeEach(() => {
  // Past the window of whatever rendered before this test.
  vi.advanceTimersByTime(METRICS_RENDER_INTERVAL_MS + 1);
  renders.mockClear();
});

const scrape = async () => {
  const res = await inject(listener, '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
};
const COUNTED = /http_requests_total\{operationId="validateBic",status="200"\} 1$/m;

describe('GET /metrics under a flood of scrapes', () => {
  it('shares one render among concurrent scrapes', async () => {
    const texts = await Promise.all(Array.from({ length: 20 }, () => metrics.render()));
    expect(renders).toHaveBeenCalledTimes(1);
    expect(new Set(texts).size).toBe(1);
  });

  it('renders once per second under a flood of scrapes over HTTP', async () => {
    const flood = async () => {
      let left = 60;
      const worker = async () => {
        while (left-- > 0) await scrape();
      };
      await Promise.all(Array.from({ length: 10 }, worker));
    };
    await flood();
    expect(renders).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(METRICS_RENDER_INTERVAL_MS - 1);
    await flood();
    expect(renders).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    await flood();
    expect(renders).toHaveBeenCalledTimes(2);
  });

  it('serves the cached text to scrapes within the same second', async () => {
    const first = await scrape();
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(90);
      expect(await scrape()).toBe(first);
    }
    expect(renders).toHaveBeenCalledTimes(1);
  });

  it('renders again once the text is a second old: a request counted meanwhile shows', async () => {
    await scrape();
    expect((await inject(listener, '/api/v1/bic/DEUTDEFF', { headers: { 'x-api-key': h.key } })).status).toBe(200);
    // Within the second the text is the one rendered before the request.
    expect(await scrape()).not.toMatch(/http_requests_total\{operationId="validateBic",status="200"\}/);
    vi.advanceTimersByTime(METRICS_RENDER_INTERVAL_MS);
    expect(await scrape()).toMatch(COUNTED);
  });
});
