// What a DNS lookup asks for (RFC 1035 §2.3.1 names, RFC 5890 A-labels): the record types and the normalised name.
import { invalidFormat, missingParameter } from '../errors.js';
import { DNS_NAME, parseName } from './host-name.js';

export const MAX_DNS_NAME = 253;

/** The record types the service looks up (openapi.yaml, lookupDns `type`); the resolver asks for exactly these. */
export type RecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME' | 'NS' | 'SOA' | 'CAA';
export const RECORD_TYPES: readonly RecordType[] = ['A', 'AAAA', 'MX', 'TXT', 'CNAME', 'NS', 'SOA', 'CAA'];

const show = (v: string): string => (v.length > 40 ? `${v.slice(0, 40)}...` : v);

/** `type` query value → distinct record types in the given order; default A. Throws INVALID_FORMAT naming the bad value. */
export function parseRecordTypes(value: string | undefined): RecordType[] {
  if (value === undefined) return ['A'];
  const out: RecordType[] = [];
  for (const raw of value.split(',')) {
    const t = raw.trim().toUpperCase();
    if (!t) continue;
    if (!(RECORD_TYPES as readonly string[]).includes(t)) {
      throw invalidFormat('type', `unsupported record type '${show(raw.trim())}'; supported: ${RECORD_TYPES.join(', ')}`);
    }
    if (!out.includes(t as RecordType)) out.push(t as RecordType);
  }
  return out.length > 0 ? out : ['A'];
}

/** Path domain → lower-case A-labels without a trailing dot (DnsName in openapi.yaml). Throws INVALID_FORMAT otherwise. */
export function normaliseLookupDomain(value: string): string {
  if (value === '') throw missingParameter('domain');
  const name = parseName(value, DNS_NAME);
  if (!name.ok) throw invalidFormat('domain', `not a valid DNS name (at most ${MAX_DNS_NAME} characters): ${name.reason}`);
  return name.name;
}
