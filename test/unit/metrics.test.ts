// Request metrics: what one answered request adds to the exposition (Prometheus text format 0.0.4).
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/http/metrics.js';

function metricsAfter(observations: [string, number, number][]) {
  const metrics = createMetrics({ defaults: false, renderIntervalMs: 0 });
  for (const [operationId, status, seconds] of observations) metrics.observe(operationId, status, seconds);
  return metrics;
}

/** The value of one sample line, or undefined when the series is absent. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('request metrics', () => {
  it.each<[string, [string, number, number][], Record<string, number | undefined>]>([
    ['no requests yet', [], { 'http_requests_total{operationId="validateBic",status="200"}': undefined }],
    [
      'one request: counted, and in every bucket from its own upwards',
      [['validateBic', 200, 0.0004]],
      {
        'http_requests_total{operationId="validateBic",status="200"}': 1,
        'http_request_duration_seconds_bucket{le="0.001",operationId="validateBic",status="200"}': 1,
        'http_request_duration_seconds_bucket{le="+Inf",operationId="validateBic",status="200"}': 1,
        'http_request_duration_seconds_count{operationId="validateBic",status="200"}': 1,
        'http_request_duration_seconds_sum{operationId="validateBic",status="200"}': 0.0004,
      },
    ],
    [
      'a value on a bound counts in that bucket (le is inclusive)',
      [['validateBic', 200, 0.0025]],
      {
        'http_request_duration_seconds_bucket{le="0.001",operationId="validateBic",status="200"}': 0,
        'http_request_duration_seconds_bucket{le="0.0025",operationId="validateBic",status="200"}': 1,
      },
    ],
    [
      'above the last bound: only +Inf',
      [['lookupDns', 200, 7.5]],
      {
        'http_request_duration_seconds_bucket{le="5",operationId="lookupDns",status="200"}': 0,
        'http_request_duration_seconds_bucket{le="+Inf",operationId="lookupDns",status="200"}': 1,
      },
    ],
    [
      'one series per operation and status',
      [
        ['validateBic', 200, 0.002],
        ['validateBic', 200, 0.03],
        ['validateBic', 429, 0.0001],
        ['unmatched', 404, 0.0002],
      ],
      {
        'http_requests_total{operationId="validateBic",status="200"}': 2,
        'http_requests_total{operationId="validateBic",status="429"}': 1,
        'http_requests_total{operationId="unmatched",status="404"}': 1,
        'http_request_duration_seconds_bucket{le="0.025",operationId="validateBic",status="200"}': 1,
        'http_request_duration_seconds_bucket{le="0.05",operationId="validateBic",status="200"}': 2,
      },
    ],
  ])('%s', async (_label, observations, want) => {
    const text = await metricsAfter(observations).render();
    for (const [line, value] of Object.entries(want)) expect(sample(text, line), line).toBe(value);
  });

  it('types the counter and the histogram', async () => {
    const text = await metricsAfter([['validateBic', 200, 0.002]]).render();
    expect(text).toMatch(/^# TYPE http_requests_total counter$/m);
    expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
  });

  it('counts again from zero after the registry resets its metrics', async () => {
    const metrics = metricsAfter([['validateBic', 200, 0.002]]);
    metrics.registry.resetMetrics();
    metrics.observe('validateBic', 200, 0.002);
    expect(sample(await metrics.render(), 'http_requests_total{operationId="validateBic",status="200"}')).toBe(1);
  });
});
