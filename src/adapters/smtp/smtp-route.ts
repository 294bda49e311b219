// Where mail for a domain goes (RFC 5321 §5.1 MX selection and implicit MX, RFC 7505 null MX): the MX hosts by
// preference and every address of each, in order, each through the target guard (src/adapters/tls/target-guard.ts).
import type { Target } from '../../domain/smtp-plan.js';
import { parseTlsTarget } from '../../domain/tls-target.js';
import { RefusedTarget, UpstreamFailure } from '../../errors.js';
import type { DnsResolver } from '../dns/resolver.js';
import { addressResolver, guardedAddresses } from '../tls/target-guard.js';

/** Where mail for a domain goes: MX hosts by preference, the domain itself (implicit MX), or nowhere. */
export type Route = { kind: 'hosts'; hosts: string[] } | { kind: 'null_mx' } | { kind: 'none' };

export async function routeOf(resolver: Pick<DnsResolver, 'query'>, domain: string): Promise<Route> {
  const mx = await resolver.query(domain, 'MX');
  const exchanges = mx.records.filter((r) => r.type === 'MX');
  // RFC 7505 §3: a null MX ("0 .") is the only MX of a domain that takes no mail.
  const real = exchanges.filter((r) => r.value !== '.' && r.value !== '');
  if (exchanges.length > 0 && real.length === 0) return { kind: 'null_mx' };
  if (real.length > 0) {
    const ordered = [...real].sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0));
    return { kind: 'hosts', hosts: [...new Set(ordered.map((r) => r.value.toLowerCase().replace(/\.$/, '')))] };
  }
  if (mx.rcode === 'NXDOMAIN') return { kind: 'none' };
  // RFC 5321 §5.1: no MX, so the domain's own address records are its implicit MX.
  const [a, aaaa] = await Promise.all([resolver.query(domain, 'A'), resolver.query(domain, 'AAAA')]);
  return a.records.some((r) => r.type === 'A') || aaaa.records.some((r) => r.type === 'AAAA') ? { kind: 'hosts', hosts: [domain] } : { kind: 'none' };
}

/**
 * The resolver's answers until `signal` aborts, then its reason: a verification's deadline (SMTP_DEADLINE_MS) and its
 * client's cancel bound its MX and address lookups too, not only DNS_TIMEOUT_MS per query. A lookup cut short goes on
 * in the resolver (its answer still caches) and is settled there.
 */
export function untilAborted(resolver: Pick<DnsResolver, 'query'>, signal: AbortSignal): Pick<DnsResolver, 'query'> {
  return {
    query: (name, type) =>
      new Promise((resolve, reject) => {
        const gone = (): void => reject(signal.reason);
        if (signal.aborted) return gone();
        signal.addEventListener('abort', gone, { once: true });
        const done = (): void => signal.removeEventListener('abort', gone);
        resolver.query(name, type).then(
          (answer) => (done(), resolve(answer)),
          (err: unknown) => (done(), reject(err)),
        );
      }),
  };
}

export interface TargetOptions {
  resolver: Pick<DnsResolver, 'query'>;
  allowPrivate: boolean;
  logger?: { debug: (obj: object, msg?: string) => void };
}

/** The addresses of one MX host under the guard; none when it has none or is refused (the next MX host is tried). */
async function addressesOf(o: TargetOptions, host: string): Promise<string[]> {
  const target = parseTlsTarget(host);
  if (target.kind === 'invalid') return [];
  try {
    const found = await guardedAddresses({ resolve: addressResolver(o.resolver as DnsResolver), allowPrivate: o.allowPrivate }, target);
    return 'addresses' in found ? found.addresses : [];
  } catch (err) {
    if (err instanceof RefusedTarget || err instanceof UpstreamFailure) {
      o.logger?.debug({ mxHost: host, reason: err.message }, 'MX host not contacted');
      return [];
    }
    throw err;
  }
}

/**
 * Every address of every MX host, MX hosts in preference order and each host's addresses in the resolver's order; an
 * address already listed under a more preferred MX name is not tried twice. The hosts are resolved side by side.
 */
export async function targetsOf(o: TargetOptions, hosts: readonly string[]): Promise<Target[]> {
  const addresses = await Promise.all(hosts.map((h) => addressesOf(o, h)));
  const seen = new Set<string>();
  const out: Target[] = [];
  hosts.forEach((mxHost, mx) => {
    for (const address of addresses[mx]) {
      if (seen.has(address)) continue;
      seen.add(address);
      out.push({ mxHost, address, mx });
    }
  });
  return out;
}
