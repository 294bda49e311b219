// Prometheus metrics (text exposition format): requests and latency by operationId and status, process metrics, caches.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface CacheStats {
  hits: number;
  misses: number;
  size: number;
}

export interface Metrics {
  registry: Registry;
  observe(operationId: string, status: number, seconds: number): void;
  /** Expose a cache's counters, read at scrape time. */
  addCache(name: string, stats: () => CacheStats): void;
}

export function createMetrics(opts: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaults !== false) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by operationId and status',
    labelNames: ['operationId', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Request latency in seconds, by operationId and status',
    labelNames: ['operationId', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const caches = new Map<string, () => CacheStats>();
  const cacheGauge = (name: string, help: string, pick: (s: CacheStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['cache'],
      registers: [registry],
      collect() {
        for (const [cache, stats] of caches) this.set({ cache }, pick(stats()));
      },
    });
  cacheGauge('cache_hits_total', 'Cache hits since start', (s) => s.hits);
  cacheGauge('cache_misses_total', 'Cache misses since start', (s) => s.misses);
  cacheGauge('cache_entries', 'Entries held in the cache', (s) => s.size);
  // Children per label pair are created once and reused: label lookups are the costly part.
  const children = new Map<string, { c: Counter.Internal; h: Histogram.Internal<string> }>();
  return {
    registry,
    observe(operationId, status, seconds) {
      const id = `${operationId}|${status}`;
      let child = children.get(id);
      if (!child) {
        const labels = { operationId, status: String(status) };
        child = { c: requests.labels(labels), h: latency.labels(labels) };
        children.set(id, child);
      }
      child.c.inc();
      child.h.observe(seconds);
    },
    addCache(name, stats) {
      caches.set(name, stats);
    },
  };
}
