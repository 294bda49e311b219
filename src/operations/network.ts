// Network operations (openapi.yaml tag Network): DNS records with mail security (RFC 1035, 7208, 7489, 6376),
// TLS certificate inspection (RFC 8446, RFC 5280) and IP geolocation (RFC 791, RFC 8200 addresses).
import type { DnsResolver } from '../adapters/dns/resolver.js';
import type { GeoIp, GeoResult } from '../adapters/geoip/geoip-reader.js';
import type { IpSecurity, IpSecurityLookup } from '../adapters/ip-data/ip-lists.js';
import type { MailSecurity } from '../adapters/mail/mail-security.js';
import type { TlsProber } from '../adapters/tls/prober.js';
import { normaliseLookupDomain, parseRecordTypes } from '../domain/dns-query.js';
import { classifyIp } from '../domain/ip-ranges.js';
import { specialUseReason } from '../domain/special-use-names.js';
import { requestedTlsTarget } from '../domain/tls-target.js';
import { invalidFormat, notFound, RefusedTarget, serviceUnavailable } from '../errors.js';
import type { OperationHandler, OperationRequest, Reply } from './types.js';

export interface NetworkDeps {
  resolver: DnsResolver;
  /** The mail-security analysis of a domain (adapters/mail/mail-security.ts). */
  mailSecurity: (domain: string) => Promise<MailSecurity>;
  /** Look up special-use and single-label names too (ALLOW_PRIVATE_TARGETS; test set-ups only). */
  allowSpecialUse?: boolean;
  tls: TlsProber;
  /** The open databases, or null while they are still loading. */
  geo: () => GeoIp | null;
  /** The hosting and Tor flags from the lists loaded now (adapters/ip-data/ip-lists.ts, hosting-asns.ts). */
  security: () => IpSecurityLookup;
  /** Take the client address from the left-most X-Forwarded-For entry (TRUST_PROXY=true). */
  trustProxy: boolean;
}

export interface NetworkOperations {
  lookupDns: OperationHandler<'lookupDns'>;
  inspectTlsCertificate: OperationHandler<'inspectTlsCertificate'>;
  lookupIp: OperationHandler<'lookupIp'>;
  lookupOwnIp: OperationHandler<'lookupOwnIp'>;
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
function clientAddress(req: Pick<OperationRequest<'lookupOwnIp'>, 'ip' | 'headers'>, trustProxy: boolean): string {
  if (trustProxy) {
    const raw = req.headers['x-forwarded-for'];
    const header = Array.isArray(raw) ? raw[0] : raw;
    const first = header?.split(',').find((e) => e.trim() !== '');
    if (first) return forwardedAddress(first);
  }
  return req.ip;
}

/** The location fields of an address neither GeoIP database knows. */
const NO_LOCATION: Omit<GeoResult, 'ip' | 'ipType'> = {
  countryCode: null,
  countryName: null,
  regionName: null,
  regionCode: null,
  cityName: null,
  continentCode: null,
  continentName: null,
  lat: null,
  lng: null,
  zipCode: null,
  timezone: null,
  isEU: false,
  asn: null,
  asnOrganization: null,
};

/** lookupDns: the records and the domain's mail security. */
export function createDnsOperations(deps: Pick<NetworkDeps, 'resolver' | 'mailSecurity' | 'allowSpecialUse'>): Pick<NetworkOperations, 'lookupDns'> {
  return {
    async lookupDns({ request }) {
      const domain = normaliseLookupDomain(request.params.domain);
      // Names of private networks (RFC 6761, 6762, 8375, single labels) never reach the resolver (openapi.yaml lookupDns).
      const refused = deps.allowSpecialUse ? null : specialUseReason(domain);
      if (refused) throw new RefusedTarget('domain', refused, `${domain} is not looked up: ${refused}`);
      const types = parseRecordTypes(request.query.type);
      const started = performance.now();
      const [answers, security] = await Promise.allSettled([
        Promise.all(types.map((t) => deps.resolver.query(domain, t))),
        deps.mailSecurity(domain),
      ]);
      const queryTimeMs = Math.round(performance.now() - started);
      if (answers.status === 'rejected') throw answers.reason;
      if (answers.value.some((a) => a.rcode === 'NXDOMAIN')) throw notFound('domain does not exist');
      if (security.status === 'rejected') throw security.reason;
      return { status: 200, body: { domain, records: answers.value.flatMap((a) => a.records), queryTimeMs, security: security.value } };
    },
  };
}

/** inspectTlsCertificate. */
export function createTlsOperations(deps: Pick<NetworkDeps, 'tls'>): Pick<NetworkOperations, 'inspectTlsCertificate'> {
  return {
    async inspectTlsCertificate({ request }) {
      // A blank value is given, not absent: INVALID_FORMAT like any other malformed target (openapi.yaml TlsHost).
      const target = requestedTlsTarget(request.params.domain);
      if (target.kind === 'invalid') throw invalidFormat('domain', target.reason);
      return { status: 200, body: await deps.tls.inspect(target.name) };
    },
  };
}

/** The three parts together (the unit tests' view of the tag). */
export function createNetworkOperations(deps: NetworkDeps): NetworkOperations {
  return { ...createDnsOperations(deps), ...createTlsOperations(deps), ...createIpOperations(deps) };
}

/** lookupIp and lookupOwnIp: geolocation with the hosting and Tor flags. */
export function createIpOperations(deps: Pick<NetworkDeps, 'geo' | 'security' | 'trustProxy'>): Pick<NetworkOperations, 'lookupIp' | 'lookupOwnIp'> {
  function locate(input: string, field: string, whose: string): Reply<200, GeoResult & { security: IpSecurity }> {
    const c = classifyIp(input);
    if (!c) throw invalidFormat(field, 'not an IPv4 or IPv6 address');
    if (!c.public) throw notFound(`${whose} ${c.address} is not public (${c.range}); it has no geolocation`);
    const geo = deps.geo();
    if (!geo) throw serviceUnavailable('geolocation data is loading');
    if (!geo.ready) throw serviceUnavailable('geolocation data is not available: the GeoIP databases could not be opened', 60);
    const found = geo.lookup(c);
    // The ASN database's answer names the network's owner: the hosting ASN list flags data-centre networks by it.
    const security = deps.security().lookup(c, found);
    if (found) return { status: 200, body: { ...found, security } };
    // The flags are what the caller wants: an address only a hosting or Tor list knows is answered, not 404.
    if (security.isHosting === true || security.isTor === true) {
      return { status: 200, body: { ip: c.address, ipType: c.version === 4 ? 'IPV4' : 'IPV6', ...NO_LOCATION, security } };
    }
    throw notFound(`no geolocation data for address ${c.address}`);
  }

  return {
    lookupIp({ request }) {
      // A blank value is given, not absent: classifyIp refuses it as INVALID_FORMAT (openapi.yaml lookupIp).
      return locate(request.params.ip.trim(), 'ip', 'address');
    },

    lookupOwnIp({ request }) {
      const ip = clientAddress(request, deps.trustProxy);
      return locate(ip, deps.trustProxy && request.headers['x-forwarded-for'] ? 'X-Forwarded-For' : 'ip', 'your address');
    },
  };
}
