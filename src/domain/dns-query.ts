// What a DNS lookup asks for (RFC 1035 §2.3.1 names, RFC 5890 A-labels): the record types and the normalised name.
import type { RecordType } from '../adapters/dns-resolver.js';
import { RECORD_TYPES } from '../adapters/dns-resolver.js';
import { invalidFormat, missingParameter } from '../errors.js';
import { toAsciiDomain } from './email.js';

export const MAX_DNS_NAME = 253;
/** DNS labels: LDH plus '_' (so _dmarc.example.com and SELECTOR._domainkey.example.com can be looked up). */
const DNS_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

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

/** Path domain → lower-case A-labels without a trailing dot. Throws INVALID_FORMAT when not a valid DNS host name. */
export function normaliseLookupDomain(value: string): string {
  if (value === '') throw missingParameter('domain');
  const text = value.trim().replace(/\.$/, '');
  const ascii = toAsciiDomain(text);
  const labels = ascii.split('.');
  const ok =
    ascii.length > 0 &&
    ascii.length <= MAX_DNS_NAME &&
    labels.every((l) => DNS_LABEL.test(l)) &&
    !/^\d+$/.test(labels[labels.length - 1]);
  if (!ok) throw invalidFormat('domain', `'${show(value)}' is not a valid host name (at most ${MAX_DNS_NAME} characters)`);
  return ascii;
}
