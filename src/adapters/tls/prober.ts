// TLS inspection of a remote host: resolve, refuse non-public targets, handshake and per-version probes, verify, grade (RFC 5280, RFC 6797 HSTS, docs/tls-grading.md).
import type { TLSSocket } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { InvalidTarget } from '../../errors.js';
import { gradeTls, hasForwardSecrecy, isAead } from '../../domain/tls-grade.js';
import { parseTlsTarget } from '../../domain/tls-target.js';
import { caIssuersUrls, createTrustStore, matchesHost, pathValidationProblem, readCertificate, verifyChain } from './cert.js';
import { fetchIssuer } from './aia-fetch.js';
import { guardedAddress, type TargetGuardOptions } from './target-guard.js';
import { inspectionContext, presentedChain, probeContexts, probeHsts, probeProtocol, tlsHandshake, PROBED_PROTOCOLS } from './connect.js';
import type { components } from '../../../generated/api.js';
import { traced } from '../tracing/spans.js';

/** The contract's TlsResult (openapi.yaml is the source of truth). */
export type TlsResult = components['schemas']['TlsResult'];

interface TlsProberStats {
  cacheEntries: number;
  cacheHits: number;
  cacheMisses: number;
  /** TLS connections attempted. */
  connections: number;
}

export interface TlsProber {
  /** Inspect a host name or IP literal. Throws InvalidTarget (not a host name or IP), RefusedTarget (non-public target), or what `resolve` throws other than NoSuchDomain. */
  inspect(domain: string): Promise<TlsResult>;
  stats(): TlsProberStats;
}

export interface TlsProberOptions extends TargetGuardOptions {
  port: number;
  /** Budget for TCP connect plus TLS handshake. */
  timeoutMs: number;
  /** Extra trust anchors (PEM bundle), e.g. the contents of TLS_EXTRA_CA_FILE. */
  extraCaPem?: string;
  /** Default 5 minutes. */
  cacheTtlMs?: number;
  /** Default 1000. */
  cacheEntries?: number;
  /** Budget for the HSTS probe (HEAD / on the inspected connection); default min(2000, timeoutMs); 0 turns it off. */
  hstsTimeoutMs?: number;
  now?: () => Date;
}

const DAY_MS = 86_400_000;

function failure(domain: string, errorMessage: string): TlsResult {
  return {
    domain,
    valid: false,
    issuer: null,
    subject: null,
    serialNumber: null,
    validFrom: null,
    validTo: null,
    daysUntilExpiry: null,
    signatureAlgorithm: null,
    subjectAlternativeNames: null,
    protocol: null,
    cipherSuite: null,
    chainLength: null,
    errorMessage,
    grade: 'F',
    warnings: [],
    keyAlgorithm: null,
    keySize: null,
    hsts: null,
    chainComplete: null,
    hstsMaxAge: null,
    protocolSupport: null,
    forwardSecrecy: null,
    aead: null,
    ocspStapled: null,
    sctPresent: null,
  };
}

/** OpenSSL's verify result as Node reports it: typed as an Error, a code string at run time. */
function verifyCode(socket: TLSSocket): string | null {
  const e = socket.authorizationError as unknown;
  return typeof e === 'string' ? e : ((e as { code?: string } | undefined)?.code ?? null);
}

/** What one prober holds: its options, trust store, TLS contexts and counters. */
interface ProberState {
  opts: TlsProberOptions;
  now: () => Date;
  store: ReturnType<typeof createTrustStore>;
  secureContext: ReturnType<typeof inspectionContext>;
  versionContexts: ReturnType<typeof probeContexts>;
  hstsTimeoutMs: number;
  counters: { hits: number; misses: number; connections: number };
}

type Target = Exclude<ReturnType<typeof parseTlsTarget>, { kind: 'invalid' }>;
type Verdict = ReturnType<typeof verifyChain>;

/** The TLS versions below 1.3: each gets a probe of its own (the full handshake offers 1.3 and tells about it). */
const OLDER_PROTOCOLS = PROBED_PROTOCOLS.filter((v) => v !== 'TLSv1.3');

/**
 * An incomplete chain: the server left out an intermediate that clients can fetch from the caIssuers URL of the last
 * certificate it did send (browsers do). Fetched within what is left of the timeout; valid, graded B.
 */
async function completedChain(state: ProberState, presented: Parameters<typeof verifyChain>[0], verdict: Verdict, at: Date, budgetMs: number): Promise<{ verdict: Verdict; chainComplete: boolean | null }> {
  const last = verdict.chain[verdict.chain.length - 1];
  const aiaUrl = !verdict.trusted && !verdict.selfSigned ? caIssuersUrls(last)[0] : undefined;
  if (aiaUrl) {
    const fetched = await fetchIssuer(state.opts, aiaUrl, budgetMs);
    const completed = fetched ? verifyChain([...presented, fetched], state.store, at) : null;
    if (completed?.trusted) return { verdict: completed, chainComplete: false };
  }
  return { verdict, chainComplete: verdict.trusted ? true : null };
}

/** Why the certificate is not valid for the target at `at` (none: valid). */
function validityProblems(fields: ReturnType<typeof readCertificate>, verdict: Verdict, socket: TLSSocket, hostOk: boolean, targetName: string, at: Date): string[] {
  const problems: string[] = [];
  if (at < fields.notBefore) problems.push(`certificate is not valid before ${fields.validFrom}`);
  if (at > fields.notAfter) problems.push(`certificate expired on ${fields.validTo}`);
  if (verdict.selfSigned) problems.push('certificate is self-signed');
  else if (!verdict.trusted) problems.push(`certificate chain is not trusted: ${verdict.problem}`);
  else {
    const pathProblem = pathValidationProblem(socket.authorized ? null : verifyCode(socket));
    if (pathProblem) problems.push(`certificate chain is not trusted: ${pathProblem}`);
  }
  if (!hostOk) problems.push(`certificate does not match host name ${targetName}`);
  return problems;
}

/** The connection made, each older version's probe started beside it, and whether an OCSP response was stapled. */
interface Connection {
  socket: TLSSocket;
  address: string;
  probes: Promise<boolean | null>[];
  ocspStapled: () => boolean;
  started: number;
}

/** The inspection of a live connection: certificate, chain, host name, HSTS, the versions accepted, the grade. */
async function inspectConnection(state: ProberState, target: Target, c: Connection): Promise<TlsResult> {
  const { opts } = state;
  const { socket, address } = c;
  const at = state.now();
  const cipher = socket.getCipher();
  const protocol = socket.getProtocol();
  const presented = presentedChain(socket);
  if (presented.length === 0) return failure(target.name, 'the server presented no certificate');
  const leaf = presented[0];
  const fields = readCertificate(leaf);
  const { verdict, chainComplete } = await completedChain(state, presented, verifyChain(presented, state.store, at), at, opts.timeoutMs - (performance.now() - c.started));
  const hostOk = matchesHost(leaf, target.kind === 'hostname' ? { kind: 'hostname', value: target.name } : { kind: 'ip', value: address });
  const problems = validityProblems(fields, verdict, socket, hostOk, target.name, at);
  const valid = problems.length === 0;
  const daysUntilExpiry = Math.floor((fields.notAfter.getTime() - at.getTime()) / DAY_MS);
  const cipherSuite = cipher?.standardName ?? cipher?.name ?? null;
  const hostHeader = `${target.kind === 'ip' && address.includes(':') ? `[${address}]` : target.name}${opts.port === 443 ? '' : `:${opts.port}`}`;
  const [hsts, probed] = await Promise.all([state.hstsTimeoutMs > 0 ? probeHsts(socket, hostHeader, state.hstsTimeoutMs) : null, Promise.all(c.probes)]);
  const protocolSupport = PROBED_PROTOCOLS.map((v) => ({
    protocol: v,
    accepted: v === protocol ? true : v === 'TLSv1.3' ? false : probed[OLDER_PROTOCOLS.indexOf(v)],
  }));
  const hstsMaxAge = hsts?.maxAge ?? null;
  const acceptedProtocols = protocolSupport.filter((p) => p.accepted === true).map((p) => p.protocol);
  const { grade, warnings } = gradeTls({ valid, validityProblems: problems, daysUntilExpiry, protocol, cipherSuite, keyAlgorithm: fields.keyAlgorithm, keySize: fields.keySize, signatureAlgorithm: fields.signatureAlgorithm, chainComplete, acceptedProtocols, hstsMaxAge });
  return {
    domain: target.name,
    valid,
    issuer: fields.issuer,
    subject: fields.subject,
    serialNumber: fields.serialNumber,
    validFrom: fields.validFrom,
    validTo: fields.validTo,
    daysUntilExpiry,
    signatureAlgorithm: fields.signatureAlgorithm,
    subjectAlternativeNames: fields.subjectAlternativeNames,
    protocol,
    cipherSuite,
    chainLength: verdict.chain.length,
    errorMessage: valid ? null : problems.join('; '),
    grade,
    warnings,
    keyAlgorithm: fields.keyAlgorithm,
    keySize: fields.keySize,
    hsts: hsts === null ? null : hsts.present,
    chainComplete,
    hstsMaxAge,
    protocolSupport,
    forwardSecrecy: cipherSuite === null ? null : hasForwardSecrecy(cipherSuite, protocol),
    aead: cipherSuite === null ? null : isAead(cipherSuite),
    ocspStapled: c.ocspStapled(),
    sctPresent: fields.embeddedScts,
  };
}

async function inspectUncached(state: ProberState, domain: string): Promise<TlsResult> {
  const { opts } = state;
  const started = performance.now();
  const target = parseTlsTarget(domain);
  if (target.kind === 'invalid') throw new InvalidTarget('domain', target.reason);
  const guarded = await guardedAddress(opts, target);
  if ('failure' in guarded) return failure(target.name, guarded.failure);
  const { address } = guarded;
  const servername = target.kind === 'hostname' ? target.name : undefined;
  // The full handshake tells whether TLS 1.3 is accepted (it is offered); each older version gets a probe of its own,
  // all at once with the handshake, so the whole inspection stays within one timeout.
  const probes = OLDER_PROTOCOLS.map((v) => probeProtocol({ address, port: opts.port, servername, timeoutMs: opts.timeoutMs, secureContext: state.versionContexts[v] }));
  state.counters.connections += 1 + probes.length;
  let ocspStapled = false;
  let socket: TLSSocket;
  try {
    socket = await tlsHandshake({
      address,
      port: opts.port,
      servername,
      timeoutMs: opts.timeoutMs,
      secureContext: state.secureContext,
      onOcspResponse: (response) => {
        ocspStapled = response !== null && response.length > 0;
      },
    });
  } catch (err) {
    return failure(target.name, (err as Error).message);
  }
  try {
    return await inspectConnection(state, target, { socket, address, probes, ocspStapled: () => ocspStapled, started });
  } catch (err) {
    return failure(target.name, `could not read the server certificate: ${(err as Error).message}`);
  } finally {
    socket.destroy();
  }
}

export function createTlsProber(opts: TlsProberOptions): TlsProber {
  const store = createTrustStore(opts.extraCaPem);
  const state: ProberState = {
    opts,
    now: opts.now ?? (() => new Date()),
    store,
    secureContext: inspectionContext(store.pems),
    versionContexts: probeContexts(),
    hstsTimeoutMs: opts.hstsTimeoutMs ?? Math.min(2000, opts.timeoutMs),
    counters: { hits: 0, misses: 0, connections: 0 },
  };
  const { counters } = state;
  const cache = new LRUCache<string, TlsResult>({ max: opts.cacheEntries ?? 1000, ttl: opts.cacheTtlMs ?? 300_000 });
  const inflight = new Map<string, Promise<TlsResult>>();

  return {
    async inspect(domain: string): Promise<TlsResult> {
      const target = parseTlsTarget(domain);
      if (target.kind === 'invalid') throw new InvalidTarget('domain', target.reason);
      const key = target.name;
      const cached = cache.get(key);
      if (cached) {
        counters.hits++;
        return cached;
      }
      counters.misses++;
      let p = inflight.get(key);
      if (!p) {
        p = traced('TLS inspect', { 'server.address': key, 'server.port': opts.port }, () => inspectUncached(state, key)).finally(() => inflight.delete(key));
        inflight.set(key, p);
      }
      const result = await p;
      cache.set(key, result);
      return result;
    },
    stats: () => ({ cacheEntries: cache.size, cacheHits: counters.hits, cacheMisses: counters.misses, connections: counters.connections }),
  };
}
