// The parts every capability shares, built before the list: the contract, tracing, metrics, the store (keys, counters,
// limiter), the one DNS resolver and data/datasets.json.
import type { Limiter } from '../../accounts/limits.js';
import { openCatalogue } from '../../adapters/files/datasets.js';
import { createDnsResolver, resolveServerNames, systemDnsServers, type DnsServer } from '../../adapters/dns/resolver.js';
import { startTracing } from '../../adapters/tracing/sdk.js';
import type { Config } from '../../config.js';
import { ConfigError } from '../../errors.js';
import type { Logger } from '../../http/logging.js';
import { createMetrics } from '../../http/metrics.js';
import { loadSpec, projectPath, type Spec } from '../../http/spec.js';
import type { Shared } from '../capability.js';
import { openStore, type Store, type StoreOptions } from './store.js';

export interface SharedOptions {
  /** Replace the limiter (tests of other behaviour use `unlimited`). */
  limiter?: Limiter;
  defaultMetrics?: boolean;
  /** Minimum time between two /metrics renders (default METRICS_RENDER_INTERVAL_MS); tests reading fresh counts use 0. */
  metricsRenderIntervalMs?: number;
  /** The embedded store's write timing (flush interval, back-off, degraded threshold): tests shorten them. */
  store?: StoreOptions;
  /** The OTEL_* variables tracing reads (default process.env): tests point them at their own receiver. */
  tracingEnv?: Readonly<Record<string, string | undefined>>;
  /** The contract (default openapi.yaml): a test's capability serves an operation of its own. */
  spec?: Spec;
}

export interface SharedParts extends Shared {
  store: Store;
  tracing: Awaited<ReturnType<typeof startTracing>>;
}

/** DNS_SERVERS with host names looked up; one that does not resolve stops the boot naming the variable. */
async function namedServers(servers: DnsServer[]): Promise<DnsServer[]> {
  return resolveServerNames(servers).catch((err: Error) => {
    throw new ConfigError('DNS_SERVERS', err.message);
  });
}

export async function startShared(config: Readonly<Config>, logger: Logger, opts: SharedOptions): Promise<SharedParts> {
  const spec = opts.spec ?? (await loadSpec());
  // Off (nothing registered) unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER asks for traces.
  const env = opts.tracingEnv ?? process.env;
  const tracing = await startTracing(env, String(spec.document.info?.version ?? 'unknown'));
  if (tracing) logger.info({ exporter: env.OTEL_TRACES_EXPORTER ?? 'otlp' }, 'tracing on');
  const metrics = createMetrics({ defaults: opts.defaultMetrics, renderIntervalMs: opts.metricsRenderIntervalMs });
  const store = await openStore(config, logger, metrics, opts);
  const catalogue = await openCatalogue(projectPath('data/datasets.json'));
  const servers = config.dnsServers ? await namedServers(config.dnsServers) : systemDnsServers();
  const resolver = createDnsResolver({ servers, timeoutMs: config.dnsTimeoutMs, logger });
  metrics.addCache('dns', () => resolver.stats());
  return { spec, tracing, metrics, store, limiter: store.limiter, catalogue, resolver, logger };
}
