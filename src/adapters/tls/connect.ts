// TLS client side of an inspection: handshake with a time budget, per-version probes, OCSP stapling (RFC 6066 §8), the presented chain, and an HSTS probe (RFC 6797).
import { X509Certificate } from 'node:crypto';
import { connect, createSecureContext, type ConnectionOptions, type DetailedPeerCertificate, type SecureContext, type TLSSocket } from 'node:tls';

/** Cipher list offered: everything OpenSSL 3 still builds, at security level 0, so weak servers get graded. */
const OFFERED_CIPHERS = 'DEFAULT:@SECLEVEL=0';

/**
 * The client context of every inspection, made once: TLS 1.0-1.3, OFFERED_CIPHERS, and `caPems` as the only
 * trust anchors, so that OpenSSL's own RFC 5280 path validation (key purpose, name and path length constraints)
 * reports on the same anchors as ours (`socket.authorizationError`; the handshake never rejects).
 */
export function inspectionContext(caPems: string[]): SecureContext {
  return createSecureContext({ ca: caPems, ciphers: OFFERED_CIPHERS, minVersion: 'TLSv1' });
}

/** The presented certificates, leaf first, as Node reports them (issuer links until a self-reference). */
export function presentedChain(socket: TLSSocket): X509Certificate[] {
  const out: X509Certificate[] = [];
  const seen = new Set<string>();
  let c: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (c && c.raw && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256);
    out.push(new X509Certificate(c.raw));
    c = c.issuerCertificate;
  }
  return out;
}

/** OpenSSL reasons (Node's ERR_SSL_* codes) grouped into what a client can act on; nothing of OpenSSL's own text is passed on. */
const TLS_FAILURES: ReadonlyArray<[RegExp, (where: string) => string]> = [
  [/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|RECORD_LENGTH_MISMATCH|HTTP_REQUEST|UNEXPECTED_MESSAGE/, (w) => `${w} did not answer with TLS`],
  [/PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL|NO_PROTOCOLS_AVAILABLE|VERSION_TOO_LOW|VERSION_TOO_HIGH/, (w) => `${w} offers no TLS version this inspector speaks`],
  [/HANDSHAKE_FAILURE|NO_SHARED_CIPHER|NO_CIPHERS_AVAILABLE|NO_SUITABLE|INSUFFICIENT_SECURITY/, (w) => `${w} refused the handshake: no cipher suite in common`],
  [/ALERT/, (w) => `${w} ended the TLS handshake with an alert`],
];

function describeConnectError(err: NodeJS.ErrnoException, where: string): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `connection refused by ${where}`;
    case 'ECONNRESET':
      return `connection reset by ${where} during the TLS handshake`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${where} is unreachable`;
    default: {
      const known = TLS_FAILURES.find(([pattern]) => pattern.test(err.code ?? ''));
      return known ? known[1](where) : `TLS handshake with ${where} failed`;
    }
  }
}

/** The protocol versions probed one by one, newest first (Node's names; SSLv3 and older cannot be offered by OpenSSL 3). */
export const PROBED_PROTOCOLS = ['TLSv1.3', 'TLSv1.2', 'TLSv1.1', 'TLSv1'] as const;
export type ProbedProtocol = (typeof PROBED_PROTOCOLS)[number];

/**
 * One client context per version, made once: that version only, every cipher OpenSSL 3 still builds at security level 0
 * (which TLS 1.0/1.1 need), no trust anchors (a probe judges the protocol, not the certificate).
 */
export function probeContexts(): Record<ProbedProtocol, SecureContext> {
  const one = (v: ProbedProtocol): SecureContext => createSecureContext({ ciphers: OFFERED_CIPHERS, minVersion: v, maxVersion: v });
  return { 'TLSv1.3': one('TLSv1.3'), 'TLSv1.2': one('TLSv1.2'), 'TLSv1.1': one('TLSv1.1'), TLSv1: one('TLSv1') };
}

/**
 * Whether the server completes a handshake limited to one protocol version: true when it does, false when it refuses
 * (an alert, a version or cipher mismatch, a reset or close during the handshake), null when nothing is known
 * (timeout, connection refused or unreachable).
 */
export function probeProtocol(o: { address: string; port: number; servername?: string; timeoutMs: number; secureContext: SecureContext }): Promise<boolean | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: o.address, port: o.port, servername: o.servername, rejectUnauthorized: false, secureContext: o.secureContext });
    let connected = false;
    const done = (v: boolean | null): void => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(null), o.timeoutMs);
    socket.once('connect', () => {
      connected = true;
    });
    socket.once('secureConnect', () => done(true));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      done(/^E(CONNREFUSED|HOSTUNREACH|NETUNREACH|TIMEDOUT)$/.test(code) ? null : connected || code.startsWith('ERR_SSL') ? false : null);
    });
    socket.once('close', () => done(connected ? false : null));
  });
}

/** The max-age of a Strict-Transport-Security value (RFC 6797 §6.1.1); null when it has none. */
function hstsMaxAge(value: string): number | null {
  const m = /(?:^|;)\s*max-age\s*=\s*"?(\d{1,12})"?\s*(?:;|$)/i.exec(value);
  return m ? Number(m[1]) : null;
}

export interface HstsProbe {
  /** The response carried Strict-Transport-Security. */
  present: boolean;
  /** Its max-age in seconds; null when absent or without one. */
  maxAge: number | null;
}

/** HEAD / over the established connection; the HSTS header seen when a response head arrives, null otherwise. */
export function probeHsts(socket: TLSSocket, host: string, timeoutMs: number): Promise<HstsProbe | null> {
  return new Promise((resolve) => {
    let buf = '';
    const done = (v: HstsProbe | null): void => {
      clearTimeout(timer);
      socket.removeAllListeners('data');
      resolve(v);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      buf += chunk;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > 32_768) done(null);
        return;
      }
      const head = buf.slice(0, end).split('\r\n');
      if (!/^HTTP\/\d(\.\d)? \d{3}/.test(head[0])) return done(null);
      // RFC 6797 §8.1: only the first header counts when several are sent.
      const line = head.slice(1).find((l) => /^strict-transport-security\s*:/i.test(l));
      done(line === undefined ? { present: false, maxAge: null } : { present: true, maxAge: hstsMaxAge(line.slice(line.indexOf(':') + 1).trim()) });
    });
    socket.once('end', () => done(null));
    socket.once('close', () => done(null));
    socket.once('error', () => done(null));
    socket.write(`HEAD / HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: tls-inspector\r\nAccept: */*\r\nConnection: close\r\n\r\n`);
  });
}

/**
 * Connect to one address and complete a TLS handshake without rejecting any certificate (judged afterwards),
 * with the inspection context's protocols and ciphers so that weak servers get graded.
 * Rejects with a client-presentable message when connect plus handshake fail or exceed timeoutMs.
 */
export function tlsHandshake(o: {
  address: string;
  port: number;
  servername?: string;
  timeoutMs: number;
  secureContext: SecureContext;
  /** Asks for a stapled OCSP response (status_request, RFC 6066 §8) and receives what the server staples; Node passes null for none. */
  onOcspResponse?: (response: Buffer | null) => void;
}): Promise<TLSSocket> {
  const { address, servername } = o;
  return new Promise((resolve, reject) => {
    const where = `${address.includes(':') ? `[${address}]` : address}:${o.port}`;
    // requestOCSP is a TLSSocket option that tls.connect passes on; Node's types leave it out of ConnectionOptions.
    const options: ConnectionOptions & { requestOCSP?: boolean } = {
      host: address,
      port: o.port,
      servername,
      rejectUnauthorized: false,
      secureContext: o.secureContext,
      requestOCSP: o.onOcspResponse !== undefined,
    };
    const socket = connect(options);
    if (o.onOcspResponse) socket.once('OCSPResponse', o.onOcspResponse);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TLS handshake with ${where} within ${o.timeoutMs} ms`));
    }, o.timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(describeConnectError(err, where)));
    });
    socket.once('close', () => {
      clearTimeout(timer);
      reject(new Error(`${where} closed the connection during the TLS handshake`));
    });
  });
}

