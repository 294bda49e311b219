// A domain's mail security from DNS: SPF (RFC 7208), DKIM keys (RFC 6376) at known selectors, and the blocks of
// domain/mail-security.ts (DMARC RFC 7489, MTA-STS RFC 8461, TLS-RPT RFC 8460, BIMI, CAA RFC 8659, DNSSEC flag).
import type { components } from '../../../generated/api.js';
import { DKIM_SELECTORS, dkimName, isDkimRecord } from '../../domain/dkim.js';
import { analyseMailSecurity, type MailSecurityIo } from '../../domain/mail-security.js';
import { MAX_DNS_NAME } from '../../domain/dns-query.js';
import { analyseSpf } from '../../domain/spf-analysis.js';
import type { DnsResolver, RecordType } from '../dns/resolver.js';

export type MailSecurity = components['schemas']['DnsResult']['security'];

/** Domains whose analysed mail security is kept (each only while its answers stay cached). */
const MAX_ANALYSES = 10_000;

type TxtLookup = (name: string) => Promise<string[]>;

/** True as soon as one selector has a key record; false when none has; rejects when none has and a lookup failed. */
function findDkim(domain: string, lookup: TxtLookup): Promise<boolean> {
  const lookups = DKIM_SELECTORS.map((s) => lookup(dkimName(s, domain)));
  return new Promise<boolean>((resolve, reject) => {
    let pending = lookups.length;
    let failure: unknown;
    for (const p of lookups) {
      p.then(
        (values) => {
          if (values.some(isDkimRecord)) resolve(true);
        },
        (err: unknown) => {
          failure ??= err;
        },
      ).finally(() => {
        if (--pending > 0) return;
        if (failure !== undefined) reject(failure);
        else resolve(false);
      });
    }
  });
}

/**
 * The mail-security analysis of a domain: ~40 lookups at once (SPF and its includes, DKIM selectors, DMARC, MTA-STS,
 * TLS-RPT, BIMI, CAA), and an MTA-STS policy fetch when its record exists.
 * The result is kept for as long as every answer it was built from stays in the resolver's cache,
 * so it is never older than those answers' TTLs allow.
 */
export function createMailSecurity(
  resolver: DnsResolver,
  fetchMtaStsPolicy: MailSecurityIo['fetchMtaStsPolicy'],
): (domain: string) => Promise<MailSecurity> {
  const txt: TxtLookup = (name) =>
    name.length > MAX_DNS_NAME ? Promise.resolve([]) : resolver.query(name, 'TXT').then((a) => a.records.map((r) => r.value));
  const analyses = new Map<string, { security: MailSecurity; until: number }>();
  return async function analyse(domain) {
    const kept = analyses.get(domain);
    if (kept && performance.now() < kept.until) return kept.security;
    const used: Array<[string, RecordType]> = [];
    const tracked = (name: string) => (used.push([name, 'TXT']), txt(name));
    const query: MailSecurityIo['query'] = (name, type) => (used.push([name, type]), resolver.query(name, type));
    const io = { txt: tracked, query, fetchMtaStsPolicy };
    const [spf, dkimFound, more] = await Promise.all([analyseSpf(domain, tracked), findDkim(domain, tracked), analyseMailSecurity(io, domain)]);
    const security = { spf, dkimFound, ...more };
    const valid = Math.min(...used.map(([n, t]) => resolver.remainingMs(n, t) ?? 0));
    if (valid > 0) {
      if (analyses.size >= MAX_ANALYSES) analyses.delete(analyses.keys().next().value!);
      analyses.set(domain, { security, until: performance.now() + valid });
    }
    return security;
  };
}
