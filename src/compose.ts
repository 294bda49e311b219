// Composition root: config -> adapters -> operations -> app dependencies. The one place that knows every adapter.
import { readFile } from 'node:fs/promises';
import type { KeyStore } from './adapters/key-store.js';
import { createSqliteKeyStore, openDatabase } from './adapters/sqlite-key-store.js';
import type { AppDeps } from './app.js';
import type { Config } from './config.js';
import { KeyDirectory } from './http/auth.js';
import { createContractValidator } from './http/contract-validator.js';
import { ApiError } from './http/errors.js';
import { unlimited, type Limiter } from './http/limits.js';
import type { Logger } from './http/logging.js';
import { createMetrics } from './http/metrics.js';
import { compileApi } from './http/request-validation.js';
import { loadSpec, projectPath } from './http/spec.js';
import type { HandlerMap } from './http/types.js';
import { loadBinTable } from './adapters/bin-table.js';
import { createDnsResolver, systemDnsServers } from './adapters/dns-resolver.js';
import { createBicOperations } from './operations/bic.js';
import { createDnsEmailOperations } from './operations/dns-email.js';
import { createIbanCardOperations } from './operations/iban-card.js';

export interface Composition {
  deps: AppDeps;
  keyStore: KeyStore;
  keys: KeyDirectory;
  /** Set when shutdown begins. */
  beginDrain(): void;
  close(): Promise<void>;
}

export interface ComposeOptions {
  /** Replace the limiter (tests of other behaviour use `unlimited`). */
  limiter?: Limiter;
  /** Extra or replacement handlers (tests inject a throwing handler). */
  handlers?: HandlerMap;
  defaultMetrics?: boolean;
}

export async function compose(config: Readonly<Config>, logger: Logger, opts: ComposeOptions = {}): Promise<Composition> {
  const spec = await loadSpec();
  const api = await compileApi(spec.document);
  const metrics = createMetrics({ defaults: opts.defaultMetrics });

  const keyStore = createSqliteKeyStore(openDatabase(config.dataDir));
  const keys = new KeyDirectory({ store: keyStore, onError: (err) => logger.warn({ err: String(err) }, 'key store unreachable') });
  await keys.refresh();
  keys.start();

  const limiter = opts.limiter ?? unlimited;
  const bin = await loadBinTable(config.binDataFile ?? projectPath('data/bin/ranges.csv'));
  logger.info({ entries: bin.size }, 'BIN table loaded');
  const resolver = createDnsResolver({
    servers: config.dnsServers ?? systemDnsServers(),
    timeoutMs: config.dnsTimeoutMs,
    logger,
  });
  metrics.addCache('dns', () => resolver.stats());

  let docsHtml: string | null = null;
  readFile(projectPath('dist/docs/index.html'), 'utf8').then(
    (html) => (docsHtml = html),
    () => logger.warn('documentation page not built (make docs): /docs answers 503'),
  );

  const notYet = (name: string) => () => {
    throw new ApiError(503, 'SERVICE_UNAVAILABLE', `${name} is not available on this server yet`, { headers: { 'Retry-After': '60' } });
  };
  const handlers: HandlerMap = {
    inspectTlsCertificate: notYet('TLS inspection'),
    checkPasswordStrength: notYet('password strength'),
    lookupIp: notYet('IP geolocation'),
    lookupOwnIp: notYet('IP geolocation'),
    ...createBicOperations(),
    ...(createIbanCardOperations({ bin }) as HandlerMap),
    ...createDnsEmailOperations({ resolver }),
    ...opts.handlers,
  };

  let draining = false;
  const deps: AppDeps = {
    api,
    handlers,
    keys,
    limiter,
    logger,
    metrics,
    trustProxy: config.trustProxy,
    draining: () => draining,
    responseCheck: config.validateResponses ? createContractValidator(spec.document) : undefined,
    spec,
    docsHtml: () => docsHtml,
    readiness: () => ({ keys: keys.loaded, limits: limiter.healthy() }),
  };
  return {
    deps,
    keyStore,
    keys,
    beginDrain: () => {
      draining = true;
    },
    async close() {
      keys.stop();
      await limiter.close();
      await keyStore.close();
    },
  };
}
