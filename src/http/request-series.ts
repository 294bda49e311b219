// Request counts and latency histograms per (operationId, status), counted on the request path in plain numbers
// and exposed to prom-client's registry at scrape time (Prometheus text exposition format 0.0.4).
import type { Metric, Registry } from 'prom-client';

/** Upper bounds of the latency buckets, in seconds (the +Inf bucket is implied). */
export const LATENCY_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Series {
  labels: { operationId: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative; index LATENCY_BUCKETS.length is the +Inf overflow. */
  perBucket: Float64Array;
}

interface Sample {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/**
 * prom-client's Counter and Histogram hash their label object on every call (sorting and joining the names),
 * here a request costs two Map lookups and three additions (docs/adr/0010).
 */
export class RequestSeries {
  private readonly byOperation = new Map<string, Map<number, Series>>();

  record(operationId: string, status: number, seconds: number): void {
    let byStatus = this.byOperation.get(operationId);
    if (byStatus === undefined) this.byOperation.set(operationId, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (s === undefined) {
      s = { labels: { operationId, status: String(status) }, count: 0, sum: 0, perBucket: new Float64Array(LATENCY_BUCKETS.length + 1) };
      byStatus.set(status, s);
    }
    s.count++;
    s.sum += seconds;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]) i++;
    s.perBucket[i]++;
  }

  private *series(): Generator<Series> {
    for (const byStatus of this.byOperation.values()) yield* byStatus.values();
  }

  /** Register the request counter (`names.counter`) and the latency histogram (`names.histogram`) with a registry. */
  register(registry: Registry, names: { counter: string; counterHelp: string; histogram: string; histogramHelp: string }): void {
    const requests = (): Sample[] => [...this.series()].map((s) => ({ value: s.count, labels: { ...s.labels } }));
    const latency = (): Sample[] => {
      const out: Sample[] = [];
      for (const s of this.series()) {
        let cumulative = 0;
        LATENCY_BUCKETS.forEach((le, i) => {
          cumulative += s.perBucket[i];
          out.push({ value: cumulative, labels: { le, ...s.labels }, metricName: `${names.histogram}_bucket` });
        });
        out.push({ value: s.count, labels: { le: '+Inf', ...s.labels }, metricName: `${names.histogram}_bucket` });
        out.push({ value: s.sum, labels: { ...s.labels }, metricName: `${names.histogram}_sum` });
        out.push({ value: s.count, labels: { ...s.labels }, metricName: `${names.histogram}_count` });
      }
      return out;
    };
    const reset = () => this.byOperation.clear();
    registry.registerMetric(collector(names.counter, names.counterHelp, 'counter', requests, reset));
    registry.registerMetric(collector(names.histogram, names.histogramHelp, 'histogram', latency, reset));
  }
}

/**
 * A metric the registry reads through the calls it makes on its own metric classes (get, reset); the
 * values are built at scrape time. Sum-aggregated, as prom-client's counters and histograms are across workers.
 * The cast: prom-client types a metric as one of its four classes and has no API for counts kept elsewhere
 * (prometheus/client_js#241); its own Counter and Histogram on the request path cost more per request than these
 * plain counts (docs/adr/0010).
 */
function collector(name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[], reset: () => void): Metric {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: async () => ({ name, help, type, aggregator: 'sum' as const, values: values() }),
    reset,
  };
  return metric as unknown as Metric;
}
