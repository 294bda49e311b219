// Host and DNS names as the API takes them (RFC 1123 §2.1 LDH labels, RFC 2181 §11 for '_' in DNS names, UTS #46 for IDNs):
// the grammar of the DnsName and TlsHost parameters of openapi.yaml, one place for both operations.
import { domainToAscii } from './idna.js';

export interface NameRules {
  /** '_' allowed in labels (DNS names such as _dmarc.example.com; never in a host name). */
  underscore: boolean;
  /** Fewest labels: 1 for a DNS name (`com`), 2 for a host to connect to (`localhost` is not one). */
  minLabels: 1 | 2;
}

/** /api/v1/dns/{domain}: any DNS name, a single label included. */
export const DNS_NAME: NameRules = { underscore: true, minLabels: 1 };
/** /api/v1/ssl/{domain}: a host name of two or more LDH labels. */
export const HOST_NAME: NameRules = { underscore: false, minLabels: 2 };

export type ParsedName = { ok: true; name: string } | { ok: false; reason: string };

const MAX_NAME = 253;
const LDH = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const LDH_UNDERSCORE = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
/** What resolvers (inet_aton, WHATWG URL) read as a number: a last label like this makes an address, not a name. */
const NUMBER = /^(?:[0-9]+|0x[0-9a-f]*)$/;
/** Characters that end a host in a URL, or never belong to one: not even UTS #46 mapping may see them. */
const NOT_IN_A_NAME = /[\s%/\\@[\]?#:]/;

/**
 * A name in lower-case A-labels without its trailing dot, or why it is none. Every name goes through UTS #46 as WHATWG
 * URLs process it (src/domain/idna.ts), so an `xn--` label that is no valid A-label (`xn--zz`) is refused on any Node.
 */
export function parseName(input: string, rules: NameRules): ParsedName {
  if (typeof input !== 'string') return { ok: false, reason: 'not a string' };
  let s = input.trim();
  if (s.endsWith('.')) s = s.slice(0, -1);
  if (s === '') return { ok: false, reason: 'empty' };
  if (s.length > 4 * MAX_NAME) return { ok: false, reason: `longer than ${MAX_NAME} characters` };
  const isAscii = /^[\x00-\x7f]*$/.test(s);
  // A non-ASCII name with a URL delimiter is none (mapping could turn a full-width form into the delimiter itself).
  const ascii = !isAscii && NOT_IN_A_NAME.test(s) ? null : domainToAscii(s);
  if (ascii === null) {
    return { ok: false, reason: isAscii ? 'an xn-- label that is not a valid A-label (UTS #46)' : 'not a valid internationalised domain name' };
  }
  if (ascii.length > MAX_NAME) return { ok: false, reason: `longer than ${MAX_NAME} characters` };
  const labels = ascii.split('.');
  if (labels.length < rules.minLabels) return { ok: false, reason: 'a host name needs at least two labels' };
  const label = rules.underscore ? LDH_UNDERSCORE : LDH;
  for (const l of labels) {
    if (l === '') return { ok: false, reason: 'empty label' };
    if (!label.test(l)) {
      const allowed = rules.underscore ? 'letters, digits, underscores or inner hyphens' : 'letters, digits or inner hyphens';
      return { ok: false, reason: `each label must be 1-63 ${allowed}` };
    }
  }
  if (NUMBER.test(labels[labels.length - 1])) return { ok: false, reason: 'the last label is a number: not a host name' };
  return { ok: true, name: ascii };
}
