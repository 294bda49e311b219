// Test harness: the production composition and app, driven in-process through app.callback() (no port) unless a file
// whose subject is sockets asks for TCP; every response of call() is checked against openapi.yaml.
import { mkdtempSync, rmSync } from 'node:fs';
import type { RequestListener, Server } from 'node:http';
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
import { GEOIP_TEST_DIR } from '../fixtures/paths.js';
import { decodeContent, inject, type Injected, type InjectOptions } from './inject.js';
import { listenOnLoopback, type Listening } from './listening.js';

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface HarnessOptions extends ComposeOptions {
  /**
   * Listen on 127.0.0.1:0 (createHttpServer, the production server) and send every request over TCP. Only for
   * files whose subject is the connection itself (pipelining, timeouts, slow clients, shutdown) or whose client is
   * another process (a browser, a CLI): each says why where it asks.
   */
  tcp?: boolean;
}

export interface Harness {
  /** The listening base URL: TCP harnesses only (an in-process harness throws, naming the option). */
  url: string;
  /** The listening server: TCP harnesses only, else null. */
  server: Server | null;
  config: Readonly<Config>;
  composition: Composition;
  /** Every log line written so far, raw. */
  logs: string[];
  /** An active key created for this harness. */
  key: string;
  call(path: string, init?: RequestInit & { key?: string | null }): Promise<TestResponse>;
  /** A request as `fetch(url + path, init)` makes it (no key added, no contract check), in-process or over TCP. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** In-process only: the response exactly as Node wrote it (field names as sent, repeated fields apart). */
  inject(path: string, opts?: InjectOptions): Promise<Injected>;
  createKey(name?: string): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

/** One validator per contract document (compiled once): files that share a worker (make test-fast) bring their own. */
const contracts = new WeakMap<object, ContractValidator>();

/** MaxMind's official test databases, in test/fixtures/geoip. */
export { GEOIP_TEST_DIR };

/** The contract check every harness response goes through: its operation's documented status and schema. */
interface Routes {
  table: PrecompiledRouter;
  document: Record<string, any>;
}

export function assertHonoursContract(routes: Routes, method: string, path: string, res: TestResponse): void {
  let contract = contracts.get(routes.document);
  if (!contract) contracts.set(routes.document, (contract = createContractValidator(routes.document)));
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

/** The request fields fetch (undici) adds when the caller did not set them. */
const FETCH_DEFAULTS: [string, string][] = [
  ['accept', '*/*'],
  ['accept-language', '*'],
  ['sec-fetch-mode', 'cors'],
  ['user-agent', 'node'],
  ['accept-encoding', 'gzip, deflate'],
];
const NORMALISED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];

/** A RequestInit's body as the bytes and default Content-Type fetch would send (Fetch standard, "extract a body"). */
async function bodyOf(body: RequestInit['body']): Promise<{ bytes: Buffer | null; type: string | null; chunked: boolean }> {
  if (body === undefined || body === null) return { bytes: null, type: null, chunked: false };
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), type: 'text/plain;charset=UTF-8', chunked: false };
  if (body instanceof URLSearchParams) return { bytes: Buffer.from(body.toString(), 'utf8'), type: 'application/x-www-form-urlencoded;charset=UTF-8', chunked: false };
  if (body instanceof Blob) return { bytes: Buffer.from(await body.arrayBuffer()), type: body.type || null, chunked: false };
  if (body instanceof ArrayBuffer) return { bytes: Buffer.from(body), type: null, chunked: false };
  if (ArrayBuffer.isView(body)) return { bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength), type: null, chunked: false };
  if (body instanceof ReadableStream) {
    const parts: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Uint8Array>) parts.push(Buffer.from(chunk));
    return { bytes: Buffer.concat(parts), type: null, chunked: true };
  }
  throw new Error(`the in-process harness does not send a ${Object.prototype.toString.call(body)} body`);
}

/** fetch(url + path, init) answered by `listener` in this process: the same request fields and body, a real Response. */
async function fetchInProcess(listener: RequestListener, path: string, init: RequestInit = {}): Promise<Response> {
  const upper = (init.method ?? 'GET').toUpperCase();
  const method = NORMALISED_METHODS.includes(upper) ? upper : (init.method ?? 'GET');
  const given = new Headers(init.headers);
  const { bytes, type, chunked } = await bodyOf(init.body);
  const fields: [string, string][] = [['host', 'localhost']];
  for (const [name, value] of given) if (name !== 'host') fields.push([name, value]);
  for (const [name, value] of FETCH_DEFAULTS) if (!given.has(name)) fields.push([name, value]);
  if (type !== null && !given.has('content-type')) fields.push(['content-type', type]);
  if (chunked) fields.push(['transfer-encoding', 'chunked']);
  else if (bytes === null && ['POST', 'PUT', 'PATCH'].includes(method)) fields.push(['content-length', '0']);
  const out = await inject(listener, path, { method, fields, body: bytes ?? undefined });
  const headers = new Headers();
  for (const [name, value] of out.raw) headers.append(name, value);
  const empty = method === 'HEAD' || [101, 103, 204, 205, 304].includes(out.status);
  const content = empty ? null : decodeContent(out.bytes, out.headers['content-encoding']);
  return new Response(content === null ? null : new Uint8Array(content), { status: out.status, statusText: out.statusText, headers });
}

export async function startHarness(env: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const { tcp = false, ...opts } = options;
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
  await composition.loaded;
  const app = await createApp(composition.deps);
  const served: Listening | null = tcp ? await listenOnLoopback(app) : null;
  const listener: RequestListener | null = served ? null : app.callback();
  const url = served?.url ?? null;
  const send = (path: string, init: RequestInit = {}): Promise<Response> => (listener ? fetchInProcess(listener, path, init) : fetch(url + path, init));
  const routes = { table: new PrecompiledRouter({ definition: composition.deps.spec.document as any }), document: composition.deps.spec.document };

  const createKey = async (name = 'test') => {
    const { record, key } = await composition.keyStore.create({ name });
    await composition.keys.refresh();
    return { id: record.id, key };
  };
  const { key } = await createKey('harness');

  return {
    get url(): string {
      if (url === null) throw new Error('this harness runs in-process: use h.call or h.fetch, or startHarness(env, { tcp: true }) in a file whose subject is sockets');
      return url;
    },
    server: served?.server ?? null,
    config,
    composition,
    logs,
    key,
    createKey,
    async call(path, init = {}) {
      const headers = new Headers(init.headers);
      const k = init.key === undefined ? key : init.key;
      if (k !== null) headers.set('X-Api-Key', k);
      const res = await send(path, { ...init, headers });
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
    fetch: send,
    inject(path, injectOpts) {
      if (!listener) throw new Error('inject() drives the app in-process: this harness listens on TCP');
      return inject(listener, path, injectOpts);
    },
    async close() {
      await served?.close();
      await composition.close();
      logger.flush();
      if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
