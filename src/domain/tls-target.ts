// TLS inspection targets: host names (RFC 1123, IDNA to A-labels), IP literals, and legacy numeric IPv4 forms (inet_aton).
import { parseLegacyIpv4 } from './ip-address.js';
import { isStandardIp, parseIp } from './ip-ranges.js';
import { HOST_NAME, parseName } from './host-name.js';

export type TlsTarget =
  /** A DNS host name in lower-case A-label form, without a trailing dot. */
  | { kind: 'hostname'; name: string }
  /** A standard IPv4/IPv6 literal (brackets allowed around IPv6); address is canonical. */
  | { kind: 'ip'; name: string; address: string }
  /** 2130706433, 0177.0.0.1, 0x7f.1, 127.1...: read as the IPv4 address the OS resolver would read. */
  | { kind: 'numeric-ipv4'; name: string; address: string }
  | { kind: 'invalid'; reason: string };

/**
 * Read any spelling of a target as the operating system would, so that the TLS prober can refuse every spelling of a
 * non-public address (it trusts no caller). Total: never throws. What the API accepts is narrower: requestedTlsTarget.
 */
export function parseTlsTarget(input: string): TlsTarget {
  if (typeof input !== 'string') return { kind: 'invalid', reason: 'not a string' };
  const s = input.trim().toLowerCase();
  if (s.length === 0) return { kind: 'invalid', reason: 'empty' };
  if (s.length > 300) return { kind: 'invalid', reason: 'longer than 253 characters' };
  const bracketed = /^\[(.*)\]$/.exec(s);
  const literal = bracketed ? bracketed[1] : s;
  if (isStandardIp(literal)) {
    if (literal.includes('%')) return { kind: 'invalid', reason: 'an IPv6 zone id is not allowed' };
    return { kind: 'ip', name: literal, address: parseIp(literal) as string };
  }
  if (bracketed) return { kind: 'invalid', reason: 'not an IPv6 address inside brackets' };
  const numeric = parseLegacyIpv4(s);
  if (numeric !== null) return { kind: 'numeric-ipv4', name: s, address: numeric };
  const name = parseName(s, HOST_NAME);
  return name.ok ? { kind: 'hostname', name: name.name } : { kind: 'invalid', reason: name.reason };
}

/**
 * A target as /api/v1/ssl/{domain} takes it (TlsHost in openapi.yaml): a host name of two or more labels, or an IP
 * address in standard text (IPv4 dotted quad, IPv6 without brackets or zone). Old numeric IPv4 forms are no host
 * names there, as on /api/v1/dns/{domain}.
 */
export function requestedTlsTarget(input: string): TlsTarget {
  const target = parseTlsTarget(input);
  if (target.kind === 'numeric-ipv4') return { kind: 'invalid', reason: 'an old numeric IPv4 form: write the address as a dotted quad' };
  if (target.kind === 'ip' && /^\s*\[/.test(input)) return { kind: 'invalid', reason: 'an IPv6 address goes without brackets' };
  return target;
}
