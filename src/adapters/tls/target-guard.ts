// The SSRF guard of every outbound TLS or HTTPS connection made for a client's target (TLS inspection, AIA, MTA-STS):
// resolve through the service's resolver, refuse non-public addresses unless allowed.
import { NoSuchDomain, RefusedTarget } from '../../errors.js';
import { classifyIp, type IpClass } from '../../domain/ip-ranges.js';
import type { TlsTarget } from '../../domain/tls-target.js';

export interface TargetGuardOptions {
  /** Addresses of a name (A then AAAA). Rejects with NoSuchDomain for NXDOMAIN (reported as a failed inspection); any other rejection propagates. */
  resolve: (name: string) => Promise<string[]>;
  allowPrivate: boolean;
}

/** Minimal view of the DNS resolver (dns/resolver.ts) that `addressResolver` needs. */
export interface AddressQuerier {
  query(name: string, type: 'A' | 'AAAA'): Promise<{ rcode: string; records: Array<{ type: string; value: string }> }>;
}

/** A `resolve` for createTlsProber over the DNS resolver: A and AAAA addresses; NXDOMAIN → NoSuchDomain. */
export function addressResolver(dns: AddressQuerier): (name: string) => Promise<string[]> {
  return async (name) => {
    const [a, aaaa] = await Promise.all([dns.query(name, 'A'), dns.query(name, 'AAAA')]);
    if (a.rcode === 'NXDOMAIN' || aaaa.rcode === 'NXDOMAIN') throw new NoSuchDomain(name);
    return [...a.records, ...aaaa.records].filter((r) => r.type === 'A' || r.type === 'AAAA').map((r) => r.value);
  };
}

/**
 * The address to connect to for a parsed target, under the inspection's guard: an IP literal as is, a host name through
 * `resolve`; a string when there is none to try (no such domain, no addresses). Throws RefusedTarget when any address is
 * non-public and private targets are not allowed, and what `resolve` throws other than NoSuchDomain.
 */
export async function guardedAddress(
  o: TargetGuardOptions,
  target: Exclude<TlsTarget, { kind: 'invalid' }>,
): Promise<{ address: string } | { failure: string }> {
  const found = await guardedAddresses(o, target);
  return 'addresses' in found ? { address: found.addresses[0] } : found;
}

/** Every address of a target in the resolver's order (A then AAAA), under the same guard as guardedAddress. */
export async function guardedAddresses(
  o: TargetGuardOptions,
  target: Exclude<TlsTarget, { kind: 'invalid' }>,
): Promise<{ addresses: string[] } | { failure: string }> {
  let addresses: string[];
  if (target.kind === 'ip' || target.kind === 'numeric-ipv4') addresses = [target.address];
  else {
    try {
      addresses = await o.resolve(target.name);
    } catch (err) {
      if (err instanceof NoSuchDomain) return { failure: `no such domain: ${target.name}` };
      throw err;
    }
  }
  // Non-IP strings (e.g. CNAME targets a resolver may list) are ignored.
  const ips = addresses.map(classifyIp).filter((c): c is IpClass => c !== null);
  const bad = ips.find((c) => !c.public);
  if (bad && !o.allowPrivate) {
    const reason = `resolves to a non-public address (${bad.range})`;
    throw new RefusedTarget('domain', reason, `refusing to inspect ${target.name}: it ${reason}`);
  }
  if (ips.length === 0) return { failure: `${target.name} has no A or AAAA records` };
  return { addresses: ips.map((c) => c.address) };
}
