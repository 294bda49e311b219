// Request counts and latency histograms: the exposition must read exactly as prom-client's own Counter and Histogram.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LATENCY_BUCKETS, RequestSeries } from '../../src/http/request-series.js';

const NAMES = {
  counter: 'http_requests_total',
  counterHelp: 'Requests answered',
  histogram: 'http_request_duration_seconds',
  histogramHelp: 'Request latency',
};

/** The same observations through prom-client's own classes: the reference exposition. */
function reference(observations: [string, number, number][]): Registry {
  const registry = new Registry();
  const labelNames = ['operationId', 'status'];
  const counter = new Counter({ name: NAMES.counter, help: NAMES.counterHelp, labelNames, registers: [registry] });
  const histogram = new Histogram({
    name: NAMES.histogram,
    help: NAMES.histogramHelp,
    labelNames,
    buckets: [...LATENCY_BUCKETS],
    registers: [registry],
  });
  for (const [operationId, status, seconds] of observations) {
    counter.inc({ operationId, status: String(status) });
    histogram.observe({ operationId, status: String(status) }, seconds);
  }
  return registry;
}

function ours(observations: [string, number, number][]): Registry {
  const registry = new Registry();
  const series = new RequestSeries();
  series.register(registry, NAMES);
  for (const [operationId, status, seconds] of observations) series.record(operationId, status, seconds);
  return registry;
}

describe('RequestSeries', () => {
  it.each<[string, [string, number, number][]]>([
    ['no requests yet', []],
    ['one request', [['validateBic', 200, 0.0004]]],
    [
      'values on bucket bounds count in that bucket (le is inclusive)',
      [
        ['validateBic', 200, 0.001],
        ['validateBic', 200, 0.0025],
        ['validateBic', 200, 5],
      ],
    ],
    ['above the last bound: only +Inf', [['lookupDns', 200, 7.5]]],
    [
      'several operations and statuses',
      [
        ['validateBic', 200, 0.002],
        ['validateBic', 200, 0.03],
        ['validateBic', 429, 0.0001],
        ['validateIban', 200, 0.012],
        ['validateIban', 400, 0.0009],
        ['unmatched', 404, 0.0002],
      ],
    ],
  ])('reads as prom-client does: %s', async (_label, observations) => {
    expect(await ours(observations).metrics()).toBe(await reference(observations).metrics());
  });

  it('reads as prom-client does as JSON (what a cluster aggregator sums)', async () => {
    const observations: [string, number, number][] = [['validateBic', 200, 0.002], ['validateBic', 503, 0.2]];
    // prom-client adds an empty exemplar slot to each histogram value; there are no exemplars here.
    const json = async (r: Registry) => JSON.parse(JSON.stringify(await r.getMetricsAsJSON(), (k, v) => (k === 'exemplar' && v == null ? undefined : v)));
    expect(await json(ours(observations))).toEqual(await json(reference(observations)));
  });

  it('starts again from zero when the registry resets its metrics', async () => {
    const registry = ours([['validateBic', 200, 0.002]]);
    registry.resetMetrics();
    expect(await registry.metrics()).toBe(await reference([]).metrics());
  });
});
