// Test harness: a real server on 127.0.0.1:0 built by the production composition; every response is checked against openapi.yaml.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { createApp } from '../../src/app.js';
import { compose, type ComposeOptions, type Composition } from '../../src/compose.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createContractValidator, type ContractValidator } from '../../src/http/contract-validator.js';
import { createLogger } from '../../src/http/logging.js';
import { PrecompiledRouter } from '../../src/http/openapi-router.js';
import { createHttpServer, listen } from '../../src/server.js';
import { GEOIP_TEST_DIR } from '../fixtures/paths.js';

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface Harness {
  url: string;
  config: Readonly<Config>;
  composition: Composition;
  /** Every log line written so far, raw. */
  logs: string[];
  /** An active key created for this harness. */
  key: string;
  call(path: string, init?: RequestInit & { key?: string | null }): Promise<TestResponse>;
  createKey(name?: string): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

let contract: ContractValidator | null = null;

/** MaxMind's official test databases, in test/fixtures/geoip. */
export { GEOIP_TEST_DIR };

/** The contract check every harness response goes through: its operation's documented status and schema. */
interface Routes {
  table: PrecompiledRouter;
  document: Record<string, any>;
}

export function assertHonoursContract(routes: Routes, method: string, path: string, res: TestResponse): void {
  contract ??= createContractValidator(routes.document);
  let problem: string | null;
  const operationId = (() => {
    try {
      const m = method === 'HEAD' ? 'GET' : method;
      return routes.table.matchOperation({ method: m, path: new URL(path, 'http://x').pathname, headers: {} }, true).operationId ?? null;
    } catch {
      return null;
    }
  })();
  if (!res.headers.get('content-type')?.startsWith('application/json')) {
    problem = `content-type is ${res.headers.get('content-type')}`;
  } else if (operationId) {
    problem = contract.check(operationId, res.status, res.body);
  } else {
    problem = contract.checkError(res.body);
  }
  expect(problem, `${method} ${path} -> ${res.status} ${res.text.slice(0, 300)}`).toBeNull();
}

export async function startHarness(env: Record<string, string> = {}, opts: ComposeOptions = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vls-test-'));
  const config = loadConfig({
    LOG_LEVEL: 'trace',
    // Limits are on, but high: tests of limits set their own.
    RATE_LIMIT_PER_MINUTE: '100000',
    PASSWORD_THREADS: '1',
    // Nothing leaves the machine: upstreams default to a closed loopback port unless a test starts its own.
    DNS_SERVERS: '127.0.0.1:9',
    PWNED_PASSWORDS_URL: 'http://127.0.0.1:9',
    GEOIP_CITY_DB: join(GEOIP_TEST_DIR, 'GeoIP2-City-Test.mmdb'),
    GEOIP_ASN_DB: join(GEOIP_TEST_DIR, 'GeoLite2-ASN-Test.mmdb'),
    ...env,
    DATA_DIR: env.DATA_DIR ?? dataDir, PORT: '0', HOST: '127.0.0.1' });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  // Tests read /metrics right after the requests they count: a render per scrape (test/security/metrics-scrapes.test.ts covers the throttle).
  const composition = await compose(config, logger, { defaultMetrics: false, metricsRenderIntervalMs: 0, ...opts });
  await composition.geoLoading;
  const server = createHttpServer(await createApp(composition.deps));
  await listen(server, 0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const routes = { table: new PrecompiledRouter({ definition: composition.deps.spec.document as any }), document: composition.deps.spec.document };

  const createKey = async (name = 'test') => {
    const { record, key } = await composition.keyStore.create({ name });
    await composition.keys.refresh();
    return { id: record.id, key };
  };
  const { key } = await createKey('harness');

  return {
    url,
    config,
    composition,
    logs,
    key,
    createKey,
    async call(path, init = {}) {
      const headers = new Headers(init.headers);
      const k = init.key === undefined ? key : init.key;
      if (k !== null) headers.set('X-Api-Key', k);
      const res = await fetch(url + path, { ...init, headers });
      const text = await res.text();
      let body: any = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      const out = { status: res.status, headers: res.headers, body, text };
      assertHonoursContract(routes, init.method ?? 'GET', path, out);
      return out;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await composition.close();
      logger.flush();
      if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
