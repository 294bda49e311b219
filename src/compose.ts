// Composition root: config -> the shared parts -> the list of capabilities -> the app's dependencies. Adding a
// capability is one module in src/capabilities/ and one line of CAPABILITIES (docs/architecture.md).
import type { KeyDirectory } from './accounts/key-directory.js';
import type { KeyStore } from './adapters/keys/key-store.js';
import type { Reloader } from './adapters/files/reload.js';
import type { AppDeps } from './app.js';
import { account } from './capabilities/account.js';
import { banking } from './capabilities/banking.js';
import type { Capability } from './capabilities/capability.js';
import { card } from './capabilities/card.js';
import { dnsMail } from './capabilities/dns-mail.js';
import { email } from './capabilities/email.js';
import { ip } from './capabilities/ip.js';
import { jobs } from './capabilities/jobs.js';
import { password } from './capabilities/password.js';
import { wireDatasets } from './capabilities/shared/datasets.js';
import { wireRefresh, type RefreshWiring } from './capabilities/shared/refresh.js';
import { docsPageOnDemand } from './capabilities/shared/docs.js';
import { startShared, type SharedOptions } from './capabilities/shared/parts.js';
import { startCapabilities, unhandled } from './capabilities/shared/start.js';
import { tls } from './capabilities/tls.js';
import type { Config } from './config.js';
import { createContractValidator } from './http/contract-validator.js';
import type { Logger } from './http/logging.js';
import type { Handlers } from './operations/types.js';

/** The capabilities, in start order: one that needs what another provides comes after it. */
export const CAPABILITIES: readonly Capability[] = [banking, card, tls, dnsMail, password, ip, email, jobs, account];

export interface Composition {
  deps: AppDeps;
  /** Reload every dataset read from files (SIGHUP): src/adapters/files/reload.ts. */
  reloader: Reloader;
  /** DATA_REFRESH's downloader in this process (null when off or in a worker), and the swap the primary asks of a worker. */
  refresher: RefreshWiring['refresher'];
  refreshed: RefreshWiring['refreshed'];
  /** Settles when the background loads (the GeoIP databases) are done, or failed. */
  loaded: Promise<void>;
  keyStore: KeyStore;
  keys: KeyDirectory;
  /** The server listens: build what was deferred past the start-up (the TLS trust store and contexts). */
  listening(): void;
  /** Set when shutdown begins. */
  beginDrain(): void;
  close(): Promise<void>;
}

export interface ComposeOptions extends SharedOptions {
  /** Replacement handlers (tests inject a throwing handler). */
  handlers?: Partial<Record<keyof Handlers, (...args: any[]) => unknown>>;
  /** The list (default CAPABILITIES): test/unit/capability-recipe.test.ts adds one the way the recipe says. */
  capabilities?: readonly Capability[];
}

export async function compose(config: Readonly<Config>, logger: Logger, opts: ComposeOptions = {}): Promise<Composition> {
  const list = opts.capabilities ?? CAPABILITIES;
  const begun = list.map((c) => c.begin?.(config));
  const shared = await startShared(config, logger, opts);
  const { spec, metrics, store, tracing } = shared;
  const started = await startCapabilities(list, config, begun, shared);
  const missing = unhandled(spec.document, started.handlers);
  if (missing.length > 0) throw new Error(`no capability handles ${missing.join(', ')} (openapi.yaml)`);
  const datasets = wireDatasets(started.datasets, shared.catalogue, logger, metrics);
  const refresh = wireRefresh(config, started.datasets, shared);
  const checks = { keys: () => store.keys.loaded && store.keys.healthy, limits: () => store.limiter.healthy(), ...started.readiness };
  const readiness = () => Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, check()]));
  metrics.addGauge('readiness_check', 'The checks GET /readyz makes: 1 passing, 0 failing', 'check', () => Object.fromEntries(Object.entries(readiness()).map(([k, v]) => [k, Number(v)])));
  let draining = false;
  const deps: AppDeps = {
    handlers: { ...started.handlers, ...opts.handlers } as Handlers,
    keys: store.keys,
    limiter: store.limiter,
    logger,
    metrics,
    tracer: tracing?.tracer,
    draining: () => draining,
    bulkMaxItems: config.bulkMaxItems,
    bodyLimits: started.bodyLimits,
    responseCheck: config.validateResponses ? createContractValidator(spec.document) : undefined,
    spec,
    docsPage: docsPageOnDemand(logger),
    readiness,
    // The store's problems (a held write lock) and the capabilities' (an SMTP proxy down): ready, but told.
    degraded: () => ({ ...store.degraded(), ...started.degraded() }),
    datasets: datasets.statuses,
  };
  return {
    deps,
    reloader: datasets.reloader,
    refresher: refresh.refresher,
    refreshed: refresh.refreshed,
    loaded: started.loaded,
    keyStore: store.keyStore,
    keys: store.keys,
    listening: () => {
      started.listening();
      refresh.listening();
    },
    beginDrain: () => void (draining = true),
    async close() {
      refresh.close();
      await started.close();
      await store.close();
      await tracing?.shutdown();
    },
  };
}
