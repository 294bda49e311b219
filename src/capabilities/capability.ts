// A capability: one concern of the API (banking, card, TLS, ...) in one module, registered in compose()'s list the way
// a Fastify plugin is registered: it declares the settings it reads and gives its datasets, handlers (by operationId),
// metrics, readiness checks and shutdown. docs/architecture.md has the recipe for adding one.
import type { Limiter } from '../accounts/limits.js';
import type { DnsResolver } from '../adapters/dns/resolver.js';
import type { Dataset } from '../adapters/files/dataset.js';
import type { DatasetCatalogue } from '../adapters/files/datasets.js';
import type { Config } from '../config.js';
import type { Logger } from '../http/logging.js';
import type { Metrics } from '../http/metrics.js';
import type { Spec } from '../http/spec.js';
import type { Handlers } from '../operations/types.js';

/**
 * What one capability gives the ones after it in the list (Fastify's decorate): each capability adds its own key
 * with `declare module './capability.js' { interface Provided { ... } }` in its own module.
 */
export interface Provided {}

/** The parts every capability may use, built once by compose() before the list (capabilities/shared/). */
export interface Shared {
  logger: Logger;
  metrics: Metrics;
  spec: Spec;
  /** The one DNS client (its cache shared): every outbound name lookup goes through it. */
  resolver: DnsResolver;
  limiter: Limiter;
  /** data/datasets.json: the records a capability's datasets are dated and judged by. */
  catalogue: DatasetCatalogue;
}

interface CapabilityContext<K extends keyof Config> extends Shared {
  /** The settings the capability declared, and only those. */
  config: Pick<Config, K>;
  provide<N extends keyof Provided>(name: N, value: Provided[N]): void;
  /** What a capability earlier in the list provided (a capability out of order fails the start naming both). */
  need<N extends keyof Provided>(name: N): Provided[N];
  /** A dataset a capability earlier in the list declared, by name (a refresh that downloads swaps it in). */
  dataset(name: string): Dataset<unknown>;
}

/** A started capability. */
export interface Started {
  /** Its operations, by operationId of openapi.yaml; compose() checks that every operation has one. */
  handlers: Partial<Handlers>;
  /** Its datasets: /readyz, /metrics and the SIGHUP reload take them from here. */
  datasets?: readonly Dataset<any>[];
  /** Named checks GET /readyz makes (all must pass for 200). */
  readiness?: Record<string, () => boolean>;
  /** Named problems that leave it ready but should be told (/readyz "degraded"), none when all is well. */
  degraded?: () => Record<string, string>;
  /** Settles when its background loads (GeoIP) are done, failed or not. */
  loaded?: Promise<void>;
  /** The server listens: build what was deferred past the start-up. Each runs in its own turn of the event loop. */
  listening?: () => void;
  /** Shutdown, after the server drained (in reverse list order). */
  close?: () => Promise<void>;
}

export interface Capability<K extends keyof Config = any, B = unknown> {
  name: string;
  /** The settings it reads (its section of src/config.ts). */
  config: readonly K[];
  /** Optional: start slow reads from the very beginning, before the shared parts exist (their result goes to start). */
  begin?: (config: Pick<Config, K>) => B;
  start(ctx: CapabilityContext<K>, begun: B): Started | Promise<Started>;
}

/** Typed identity: infers the settings a capability declares, so `ctx.config` holds those alone. */
export const defineCapability = <K extends keyof Config, B = undefined>(capability: Capability<K, B>): Capability<K, B> => capability;
