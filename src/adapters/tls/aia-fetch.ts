// Missing-intermediate retrieval from a certificate's caIssuers URL (RFC 5280 §4.2.2.1; DER or PEM, not PKCS#7) under the TLS inspection's target guard.
import { X509Certificate } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseTlsTarget } from '../../domain/tls-target.js';
import { parseUrl } from '../../domain/url.js';
import { guardedAddress, type TargetGuardOptions } from './target-guard.js';

/** A certificate is a few KiB; anything larger is not one. */
const MAX_BYTES = 65_536;

/**
 * The certificate at `url` (http or https), or null when it cannot be had within timeoutMs: a non-public or unresolvable
 * host, any status but 200, a body over 64 KiB, or a body that is neither a DER nor a PEM certificate. Never throws.
 */
export async function fetchIssuer(o: TargetGuardOptions, url: string, timeoutMs: number): Promise<X509Certificate | null> {
  const deadline = performance.now() + timeoutMs;
  // The standard's parser, not the runtime's: whether an intermediate is fetched (and so the chain's verdict) is the same on every Node.
  const u = parseUrl(url);
  if (!u) return null;
  const target = parseTlsTarget(u.hostname);
  if (target.kind === 'invalid' || (u.protocol !== 'http:' && u.protocol !== 'https:')) return null;
  let address: string;
  try {
    const guarded = await guardedAddress(o, target);
    if ('failure' in guarded) return null;
    address = guarded.address;
  } catch {
    return null; // a refused (non-public) target or a failed lookup: the intermediate stays missing
  }
  const left = deadline - performance.now();
  if (left <= 0) return null;
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (cert: X509Certificate | null): void => {
      clearTimeout(timer);
      req.destroy();
      resolve(cert);
    };
    const req = request({ host: address, port: u.port || undefined, path: `${u.pathname}${u.search}`, servername: target.kind === 'hostname' ? target.name : undefined, headers: { host: u.host }, agent: false });
    const timer = setTimeout(() => done(null), left);
    req.on('error', () => done(null));
    req.on('response', (res) => {
      if (res.statusCode !== 200) return done(null);
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BYTES) return done(null);
        chunks.push(c);
      });
      res.on('end', () => {
        try {
          done(new X509Certificate(Buffer.concat(chunks)));
        } catch {
          done(null);
        }
      });
      res.on('error', () => done(null));
    });
    req.end();
  });
}
