// MTA-STS policy retrieval (RFC 8461 §3.3): HTTPS GET of /.well-known/mta-sts.txt under the TLS inspection's target guard, timeout and a size cap.
import { request } from 'node:https';
import { LRUCache } from 'lru-cache';
import { MTA_STS_POLICY_PATH, mtaStsPolicyHost, type PolicyFetch } from '../../domain/mta-sts.js';
import { parseTlsTarget } from '../../domain/tls-target.js';
import { RefusedTarget } from '../../errors.js';
import { createTrustStore } from '../tls/cert.js';
import { guardedAddress, type TargetGuardOptions } from '../tls/target-guard.js';

export interface MtaStsFetcherOptions extends TargetGuardOptions {
  extraCaPem?: string;
  /** Port of the policy host: 443 (the TLS inspection's port setting, so that tests can serve on loopback). */
  port: number;
  /** Budget for resolve, connect, handshake and the whole response. */
  timeoutMs: number;
  /** Largest policy body read; default 64 KiB (a policy is a few lines). */
  maxBytes?: number;
  /** How long a result (failures included) is reused; default 5 minutes, like the TLS inspection. */
  cacheTtlMs?: number;
}

/** Node's certificate verification codes: the policy host's certificate is not valid for it (RFC 8461 §3.3 requires one). */
const CERT_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME|HOSTNAME/;

/** Why a fetch failed, as a fixed phrase naming the host; never library text. */
function describe(err: NodeJS.ErrnoException, host: string): string {
  if (CERT_ERROR.test(err.code ?? '')) return `${host} presented a certificate that is not valid for it`;
  if (err.code === 'ECONNREFUSED') return `connection refused by ${host}`;
  if (err.code === 'ECONNRESET') return `${host} reset the connection`;
  return `no HTTPS answer from ${host}`;
}

/** A `fetchMtaStsPolicy` for analyseMailSecurity (src/domain/mail-security.ts). */
export function createMtaStsFetcher(opts: MtaStsFetcherOptions): (domain: string) => Promise<PolicyFetch> {
  const ca = createTrustStore(opts.extraCaPem).pems;
  const maxBytes = opts.maxBytes ?? 65_536;
  const cache = new LRUCache<string, PolicyFetch>({ max: 1000, ttl: opts.cacheTtlMs ?? 300_000 });
  const inflight = new Map<string, Promise<PolicyFetch>>();

  function get(address: string, host: string, deadline: number): Promise<PolicyFetch> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: PolicyFetch): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve(r);
      };
      const req = request({
        host: address,
        port: opts.port,
        servername: host,
        path: MTA_STS_POLICY_PATH,
        method: 'GET',
        headers: { host: opts.port === 443 ? host : `${host}:${opts.port}`, accept: 'text/plain', 'user-agent': 'mta-sts-check' },
        ca,
        agent: false,
      });
      const timer = setTimeout(() => done({ ok: false, reason: `no complete answer from ${host} within ${opts.timeoutMs} ms` }), Math.max(1, deadline - performance.now()));
      req.on('error', (err: NodeJS.ErrnoException) => done({ ok: false, reason: describe(err, host) }));
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) return done({ ok: false, reason: `${host} answered a redirect, which senders do not follow (RFC 8461 §3.3)` });
        if (status !== 200) return done({ ok: false, reason: `${host} answered HTTP ${status}` });
        const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        if (type !== 'text/plain') return done({ ok: false, reason: `${host} served the policy as ${type || 'no media type'}, not text/plain (RFC 8461 §3.2)` });
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) return done({ ok: false, reason: `the policy at ${host} is larger than ${maxBytes} bytes` });
          chunks.push(c);
        });
        res.on('end', () => done({ ok: true, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () => done({ ok: false, reason: `${host} ended the answer early` }));
      });
      req.end();
    });
  }

  async function fetchUncached(domain: string): Promise<PolicyFetch> {
    const host = mtaStsPolicyHost(domain);
    const target = parseTlsTarget(host);
    if (target.kind !== 'hostname') return { ok: false, reason: `${host} is not a valid host name` };
    const deadline = performance.now() + opts.timeoutMs;
    let guarded: Awaited<ReturnType<typeof guardedAddress>>;
    try {
      guarded = await guardedAddress(opts, target);
    } catch (err) {
      if (err instanceof RefusedTarget) return { ok: false, reason: `${host} resolves to a non-public address, which is not fetched` };
      return { ok: false, reason: `the DNS lookup of ${host} failed` };
    }
    if ('failure' in guarded) return { ok: false, reason: guarded.failure };
    return get(guarded.address, host, deadline);
  }

  return async (domain) => {
    const key = domain.toLowerCase();
    const cached = cache.get(key);
    if (cached) return cached;
    let p = inflight.get(key);
    if (!p) {
      p = fetchUncached(key).finally(() => inflight.delete(key));
      inflight.set(key, p);
    }
    const r = await p;
    cache.set(key, r);
    return r;
  };
}
