// Special-use and private domain names (RFC 6761, RFC 6762, RFC 7686, RFC 8375, RFC 9476): names a public lookup
// service must not send to its resolver, since they can only name hosts inside a private network.

/**
 * Suffixes refused, with why. Not refused, as RFC 6761 asks: `test` (§6.2) and `example` (§6.5), which
 * "application software SHOULD NOT recognize as special" (a public resolver answers NXDOMAIN for them).
 */
const SPECIAL_USE: ReadonlyArray<readonly [suffix: string, why: string]> = [
  ['localhost', 'names the local host (RFC 6761 §6.3)'],
  ['invalid', 'is guaranteed not to exist (RFC 6761 §6.4)'],
  ['local', 'is resolved by multicast DNS on the local link only (RFC 6762 §3)'],
  ['home.arpa', 'names hosts of a home network (RFC 8375)'],
  ['onion', 'is a Tor onion service, not a DNS name (RFC 7686)'],
  ['alt', 'belongs to a non-DNS name system (RFC 9476)'],
  ['internal', 'is reserved for private networks (ICANN, 2024)'],
  // Top-level names used privately that RFC 6762 Appendix G warns against; none is delegated publicly.
  ['intranet', 'is a private network name (RFC 6762 Appendix G)'],
  ['private', 'is a private network name (RFC 6762 Appendix G)'],
  ['corp', 'is a private network name (RFC 6762 Appendix G)'],
  ['home', 'is a private network name (RFC 6762 Appendix G)'],
  ['lan', 'is a private network name (RFC 6762 Appendix G)'],
];

/**
 * Why `name` (lower-case A-labels, no trailing dot) is not looked up for a client, or null when it may be: a
 * single-label name (a resolver completes it with its search domains) or a name at or under a special-use or
 * private suffix. The DNS and email operations refuse these unless ALLOW_PRIVATE_TARGETS=true (openapi.yaml).
 */
export function specialUseReason(name: string): string | null {
  const text = name.toLowerCase().replace(/\.$/, '');
  for (const [suffix, why] of SPECIAL_USE) {
    if (text === suffix || text.endsWith(`.${suffix}`)) return `'${suffix}' ${why}`;
  }
  if (!text.includes('.')) return `'${text}' is a single-label name, which resolvers complete inside a private network`;
  return null;
}
