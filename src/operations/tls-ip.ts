// HTTP handlers: TLS certificate inspection (GET /ssl/{domain}) and IP geolocation (GET /ip/{ip}, GET /ip); INTERFACE.md 2.4, 2.7.
import type { GeoIp, GeoResult } from '../adapters/geoip-reader.js';
import type { TlsProber, TlsResult } from '../adapters/tls-prober.js';
import { classifyIp } from '../domain/ip-ranges.js';
import { requestedTlsTarget } from '../domain/tls-target.js';
import { invalidFormat, missingParameter, notFound, serviceUnavailable } from '../http/errors.js';
import type { ApiRequest, Handler, Reply } from '../http/types.js';

export interface TlsIpDeps {
  tls: TlsProber;
  /** The open databases, or null while they are still loading. */
  geo: () => GeoIp | null;
  /** Take the client address from the left-most X-Forwarded-For entry (TRUST_PROXY=true). */
  trustProxy: boolean;
}

export interface TlsIpOperations {
  inspectTlsCertificate: Handler<ApiRequest<{ domain?: string }>, Reply<200, TlsResult>>;
  lookupIp: Handler<ApiRequest<{ ip?: string }>, Reply<200, GeoResult>>;
  lookupOwnIp: Handler<ApiRequest, Reply<200, GeoResult>>;
  [operationId: string]: Handler;
}

/** Strip a port and IPv6 brackets that some proxies add to X-Forwarded-For entries. */
function forwardedAddress(entry: string): string {
  const s = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) return bracketed[1];
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(s);
  return v4port ? v4port[1] : s;
}

/**
 * The client's address: the peer, or with trustProxy the left-most X-Forwarded-For entry when present.
 * Empty list elements are skipped (RFC 9110 §5.6.1), so ', 81.2.69.142' means 81.2.69.142, not the peer.
 */
export function clientAddress(req: Pick<ApiRequest, 'ip' | 'headers'>, trustProxy: boolean): string {
  if (trustProxy) {
    const raw = req.headers['x-forwarded-for'];
    const header = Array.isArray(raw) ? raw[0] : raw;
    const first = header?.split(',').find((e) => e.trim() !== '');
    if (first) return forwardedAddress(first);
  }
  return req.ip;
}

export function createTlsIpOperations(deps: TlsIpDeps): TlsIpOperations {
  function locate(input: string, field: string, whose: string): Reply<200, GeoResult> {
    const c = classifyIp(input);
    if (!c) throw invalidFormat(field, 'not an IPv4 or IPv6 address');
    if (!c.public) throw notFound(`${whose} ${c.address} is not public (${c.range}); it has no geolocation`);
    const geo = deps.geo();
    if (!geo) throw serviceUnavailable('geolocation data is loading');
    if (!geo.ready) throw serviceUnavailable('geolocation data is not available: the GeoIP databases could not be opened', 60);
    const found = geo.lookup(c);
    if (!found) throw notFound(`no geolocation data for address ${c.address}`);
    return { status: 200, body: found };
  }

  return {
    async inspectTlsCertificate(req) {
      const domain = req.params?.domain;
      if (domain === undefined) throw missingParameter('domain');
      // A blank value is given, not absent: INVALID_FORMAT like any other malformed target (openapi.yaml TlsHost).
      const target = requestedTlsTarget(domain);
      if (target.kind === 'invalid') throw invalidFormat('domain', target.reason);
      return { status: 200, body: await deps.tls.inspect(target.name) };
    },

    lookupIp(req) {
      const ip = req.params?.ip;
      if (ip === undefined) throw missingParameter('ip');
      // A blank value is given, not absent: classifyIp refuses it as INVALID_FORMAT (openapi.yaml lookupIp).
      return locate(ip.trim(), 'ip', 'address');
    },

    lookupOwnIp(req) {
      const ip = clientAddress(req, deps.trustProxy);
      return locate(ip, deps.trustProxy && req.headers['x-forwarded-for'] ? 'X-Forwarded-For' : 'ip', 'your address');
    },
  };
}
