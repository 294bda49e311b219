// Prometheus metrics (text exposition format): requests and latency by operationId and status, process metrics,
// caches, readiness checks and the limits store.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Upper bounds of the request latency buckets, in seconds (the +Inf bucket is implied). */
const LATENCY_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface CacheStats {
  hits: number;
  misses: number;
  size: number;
}

export interface Metrics {
  registry: Registry;
  /**
   * The exposition text. A render reads every series and costs far more than an API request, so it runs at most once
   * per renderIntervalMs: scrapes meanwhile get the text already made, and concurrent ones share one render.
   */
  render(): Promise<string>;
  observe(operationId: string, status: number, seconds: number): void;
  /** Expose a cache's counters, read at scrape time. */
  addCache(name: string, stats: () => CacheStats): void;
  /** A gauge with one series per label value, read at scrape time. */
  addGauge(name: string, help: string, label: string, read: () => Record<string, number>): void;
  /** A counter kept elsewhere (it only grows), read at scrape time. */
  addCounter(name: string, help: string, read: () => number): void;
  /** Counters kept elsewhere, one series per label value, read at scrape time. */
  addCounters(name: string, help: string, label: string, read: () => Record<string, number>): void;
}

/** How old the text served to a scrape may be; Prometheus scrapes every 15 s or more by default. */
export const METRICS_RENDER_INTERVAL_MS = 1000;

export interface MetricsOptions {
  /** Node's process metrics (prom-client's defaults); on unless false. */
  defaults?: boolean;
  /** Minimum time between two renders; 0 renders for every scrape not sharing one in progress. */
  renderIntervalMs?: number;
}

/** A render at most every `intervalMs`, measured from the end of the last one. */
function throttledRender(registry: Registry, intervalMs: number): () => Promise<string> {
  let last: { text: string; at: number } | null = null;
  let pending: Promise<string> | null = null;
  return () => {
    if (last !== null && performance.now() - last.at < intervalMs) return Promise.resolve(last.text);
    pending ??= registry
      .metrics()
      .then((text) => {
        last = { text, at: performance.now() };
        return text;
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  };
}

/** The caches' hits, misses and entries, one series per registered cache, read at scrape time. */
function cacheMetrics(registry: Registry): Map<string, () => CacheStats> {
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
  // Hits and misses only grow: counters (Prometheus reserves _total for them), read from the caches' own tallies.
  const cacheCounter = (name: string, help: string, pick: (s: CacheStats) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['cache'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [cache, stats] of caches) this.inc({ cache }, pick(stats()));
      },
    });
  cacheCounter('cache_hits_total', 'Cache hits since start', (s) => s.hits);
  cacheCounter('cache_misses_total', 'Cache misses since start', (s) => s.misses);
  cacheGauge('cache_entries', 'Entries held in the cache', (s) => s.size);
  return caches;
}

export function createMetrics(opts: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (opts.defaults !== false) collectDefaultMetrics({ register: registry });
  const labelNames = ['operationId', 'status'] as const;
  // Only the histogram counts per request: the request counter is its _count series, read at scrape time (half the
  // metrics cost of a BIC request, docs/adr/0010).
  new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by operationId and status',
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const v of (await latency.get()).values) if (v.metricName === 'http_request_duration_seconds_count') this.inc(v.labels, v.value);
    },
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Request latency in seconds, by operationId and status',
    labelNames,
    buckets: [...LATENCY_BUCKETS],
    registers: [registry],
  });
  const caches = cacheMetrics(registry);
  return {
    registry,
    render: throttledRender(registry, opts.renderIntervalMs ?? METRICS_RENDER_INTERVAL_MS),
    observe(operationId, status, seconds) {
      latency.observe({ operationId, status: String(status) }, seconds);
    },
    addCache(name, stats) {
      caches.set(name, stats);
    },
    addGauge(name, help, label, read) {
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers: [registry],
        collect() {
          for (const [value, n] of Object.entries(read())) this.set({ [label]: value }, n);
        },
      });
    },
    addCounters(name, help, label, read) {
      new Counter({
        name,
        help,
        labelNames: [label],
        registers: [registry],
        collect() {
          this.reset();
          for (const [value, n] of Object.entries(read())) this.inc({ [label]: value }, n);
        },
      });
    },
    addCounter(name, help, read) {
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    },
  };
}
