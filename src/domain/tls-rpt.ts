// SMTP TLS Reporting policy record at _smtp._tls.DOMAIN (RFC 8460 §3): version, rua destinations.
import { dmarcTags } from './dmarc.js';

export interface TlsRptResult {
  /** A record starting with `v=TLSRPTv1` exists at `_smtp._tls.DOMAIN`. */
  present: boolean;
  rawRecord: string;
  /** The `rua` destinations (mailto: or https: URIs), in order. */
  rua: string[];
  warnings: string[];
}

const VERSION = /^v=TLSRPTv1[ \t]*(;|$)/;

/** The DNS name of a domain's TLS-RPT record. */
export const tlsRptName = (domain: string): string => `_smtp._tls.${domain}`;

/** Parse the TXT strings of _smtp._tls.DOMAIN. Pure and total. */
export function parseTlsRpt(txtRecords: readonly string[]): TlsRptResult {
  const found = txtRecords.filter((t) => typeof t === 'string' && VERSION.test(t));
  if (found.length === 0) return { present: false, rawRecord: '', rua: [], warnings: [] };
  const warnings: string[] = [];
  if (found.length > 1) warnings.push(`${found.length} TLS-RPT records found: senders then assume none (RFC 8460 §3); analysed the first`);
  const rawRecord = found[0];
  const rua = (dmarcTags(rawRecord).get('rua') ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (rua.length === 0) warnings.push('the required rua= tag is missing or empty: reports have nowhere to go');
  for (const u of rua) {
    if (!/^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/i.test(u)) warnings.push(`rua destination '${u}' is neither a mailto: address nor an https: URL`);
  }
  return { present: true, rawRecord, rua, warnings };
}
