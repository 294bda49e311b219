// A net/tls `lookup` over the service's own DNS resolver, so outbound HTTP names resolve through DNS_SERVERS too.
import { isIP, type LookupFunction } from 'node:net';
import type { DnsResolver } from './resolver.js';

type Family = 4 | 6;
type LookupOptions = { family?: number | 'IPv4' | 'IPv6'; all?: boolean };

const familyOf = (options: LookupOptions): Family | 0 => {
  const f = options.family;
  return f === 4 || f === 'IPv4' ? 4 : f === 6 || f === 'IPv6' ? 6 : 0;
};

const notFound = (hostname: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND', hostname });

/** A, then AAAA addresses of hostname through `resolver` (IP literals pass through), in the form net.connect asks for. */
export function resolverLookup(resolver: Pick<DnsResolver, 'query'>): LookupFunction {
  return (hostname, options, callback) => {
    const want = familyOf(options as LookupOptions);
    const all = (options as LookupOptions).all === true;
    const literal = isIP(hostname);
    const addresses: Promise<Array<{ address: string; family: Family }>> = literal
      ? Promise.resolve([{ address: hostname, family: literal as Family }])
      : Promise.all([want === 6 ? null : resolver.query(hostname, 'A'), want === 4 ? null : resolver.query(hostname, 'AAAA')]).then(
          ([a, aaaa]) =>
            [...(a?.records ?? []), ...(aaaa?.records ?? [])]
              .filter((r) => r.type === 'A' || r.type === 'AAAA')
              .map((r) => ({ address: r.value, family: (r.type === 'A' ? 4 : 6) as Family })),
        );
    addresses.then(
      (list) => {
        const usable = want === 0 ? list : list.filter((a) => a.family === want);
        if (usable.length === 0) return callback(notFound(hostname), all ? [] : '', 4);
        if (all) return (callback as unknown as (e: null, a: typeof usable) => void)(null, usable);
        callback(null, usable[0].address, usable[0].family);
      },
      () => callback(Object.assign(new Error(`DNS lookup of ${hostname} failed`), { code: 'EAI_AGAIN', hostname }), all ? [] : '', 4),
    );
  };
}
