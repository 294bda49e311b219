// TLS inspection target parsing: host name (RFC 1123, IDNA to A-labels), IP literal, or a legacy numeric IPv4 form.
import { domainToASCII } from 'node:url';
import { isStandardIp, parseIp, parseLegacyIpv4 } from './ip-ranges.js';

export type TlsTarget =
  /** A DNS host name in lower-case A-label form, without a trailing dot. */
  | { kind: 'hostname'; name: string }
  /** A standard IPv4/IPv6 literal (brackets allowed around IPv6); address is canonical. */
  | { kind: 'ip'; name: string; address: string }
  /** 2130706433, 0177.0.0.1, 0x7f.1, 127.1...: read as the IPv4 address the OS resolver would read. */
  | { kind: 'numeric-ipv4'; name: string; address: string }
  | { kind: 'invalid'; reason: string };

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Parse what a client gave as the `domain` of a TLS inspection. Total: never throws. */
export function parseTlsTarget(input: string): TlsTarget {
  if (typeof input !== 'string') return { kind: 'invalid', reason: 'not a string' };
  let s = input.trim().toLowerCase();
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
  if (s.endsWith('.')) s = s.slice(0, -1);
  if (/[^\x21-\x7e]/.test(s)) {
    const ascii = domainToASCII(s);
    if (ascii === '') return { kind: 'invalid', reason: 'not a valid internationalised domain name' };
    s = ascii;
  }
  if (s.length > 253) return { kind: 'invalid', reason: 'longer than 253 characters' };
  const labels = s.split('.');
  if (labels.length < 2) return { kind: 'invalid', reason: 'a domain needs at least two labels' };
  for (const label of labels) {
    if (label === '') return { kind: 'invalid', reason: 'empty label' };
    if (!LABEL.test(label)) {
      return { kind: 'invalid', reason: `label "${label.slice(0, 63)}" must be 1-63 letters, digits or inner hyphens` };
    }
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return { kind: 'invalid', reason: 'the top-level label is numeric' };
  return { kind: 'hostname', name: s };
}
