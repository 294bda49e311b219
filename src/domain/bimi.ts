// BIMI assertion record at default._bimi.DOMAIN (IETF draft-brand-indicators-for-message-identification): v=BIMI1, l= logo, a= evidence.
import { dmarcTags, type AppliedPolicy } from './dmarc.js';
import { parseUrl } from './url.js';

export interface BimiResult {
  /** A record starting with `v=BIMI1` exists at `default._bimi.DOMAIN`. */
  present: boolean;
  rawRecord: string;
  /** The `l=` logo URL (an SVG over https); empty when absent. */
  logoUrl: string;
  /** The `a=` evidence document (mark certificate) URL; empty when absent. */
  authorityUrl: string;
  warnings: string[];
}

const VERSION = /^v=BIMI1[ \t]*(;|$)/;

export const bimiName = (domain: string): string => `default._bimi.${domain}`;

const httpsUrl = (u: string): boolean => parseUrl(u)?.protocol === 'https:';

/**
 * Parse the TXT strings of default._bimi.DOMAIN and judge them with the DMARC policy that applies to DOMAIN (for a
 * subdomain under its organisational domain's record, that record's sp=): mail providers show a BIMI logo only for
 * mail under a DMARC policy at enforcement (quarantine or reject, on all mail; BIMI draft §7.1). Pure and total.
 */
export function analyseBimiRecords(txtRecords: readonly string[], dmarc: AppliedPolicy): BimiResult {
  const found = txtRecords.filter((t) => typeof t === 'string' && VERSION.test(t));
  if (found.length === 0) return { present: false, rawRecord: '', logoUrl: '', authorityUrl: '', warnings: [] };
  const warnings: string[] = [];
  if (found.length > 1) warnings.push(`${found.length} BIMI records found: receivers ignore them all; analysed the first`);
  const rawRecord = found[0];
  const tags = dmarcTags(rawRecord);
  const logoUrl = tags.get('l') ?? '';
  const authorityUrl = tags.get('a') ?? '';
  if (!tags.has('l')) warnings.push('the l= tag (logo URL) is missing');
  else if (logoUrl === '' && authorityUrl === '') warnings.push('empty l= and a=: the domain declines to publish a logo');
  else if (logoUrl !== '' && !httpsUrl(logoUrl)) warnings.push(`l=${logoUrl} is not an https: URL`);
  if (authorityUrl !== '' && !httpsUrl(authorityUrl)) warnings.push(`a=${authorityUrl} is not an https: URL`);
  if (logoUrl !== '' && authorityUrl === '') warnings.push('no a= evidence document (mark certificate): most mailbox providers show no logo without one');
  const pct = dmarc.pct;
  if (dmarc.policy !== 'quarantine' && dmarc.policy !== 'reject') {
    warnings.push(
      dmarc.tag === 'sp'
        ? `DMARC is not at enforcement for this name: its organisational domain's record applies sp=${dmarc.policy} to it (BIMI needs quarantine or reject): BIMI logos are not shown`
        : 'DMARC is not at enforcement (p=quarantine or p=reject): BIMI logos are not shown',
    );
  } else if (pct !== undefined && pct !== '100') {
    warnings.push(`DMARC pct=${pct}: BIMI requires the policy on all mail (pct=100)`);
  }
  return { present: true, rawRecord, logoUrl, authorityUrl, warnings };
}
