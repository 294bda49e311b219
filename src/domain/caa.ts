// CAA analysis (RFC 8659): the relevant record set, found by climbing from the name to its parents, and the issuers it allows.
import type { components } from '../../generated/api.js';

/** CAA values of one name in presentation form (`flags tag "value"`); [] when none. May reject on upstream failure. */
export type CaaLookup = (name: string) => Promise<string[]>;

/** The contract's CaaResult (openapi.yaml is the source of truth for its fields and their meaning). */
export type CaaResult = components['schemas']['CaaResult'];

interface CaaProperty {
  critical: boolean;
  tag: string;
  value: string;
}

/** Tags registered with IANA for the CAA property registry (RFC 8659 §7.2 and later registrations). */
const KNOWN_TAGS = new Set(['issue', 'issuewild', 'iodef', 'contactemail', 'contactphone', 'issuemail', 'issuevmc']);
/** An issuer domain name (RFC 8659 §4.2): LDH labels separated by dots. */
const ISSUER = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
/** Names climbed at most: a real name has far fewer labels, and each is one query. */
const MAX_CLIMB = 10;

/** Parse `flags tag "value"`; null when the text is not in that form. */
export function parseCaaRecord(text: string): CaaProperty | null {
  const m = /^(\d{1,3})\s+([A-Za-z0-9]+)\s+"((?:[^"\\]|\\.)*)"$/.exec(text.trim());
  if (!m) return null;
  return { critical: (Number(m[1]) & 128) !== 0, tag: m[2].toLowerCase(), value: m[3].replace(/\\(.)/g, '$1') };
}

/** The issuer domain of an issue/issuewild value (before any `;` parameters); '' for an empty value (no issuance). */
function caaIssuer(value: string): string {
  return value.split(';')[0].trim().toLowerCase();
}

/** The name and its parents, nearest first, without the root (RFC 8659 §3). */
export function caaClimb(domain: string): string[] {
  const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
  const out: string[] = [];
  for (let i = 0; i < labels.length && out.length < MAX_CLIMB; i++) out.push(labels.slice(i).join('.'));
  return out;
}

/** Analyse the relevant record set found at `recordName`. Pure. */
export function analyseCaaRecords(recordName: string, records: readonly string[]): CaaResult {
  const warnings: string[] = [];
  const issue: string[] = [];
  const issueWild: string[] = [];
  const iodef: string[] = [];
  let hasIssue = false;
  let hasWild = false;
  for (const text of records) {
    const p = parseCaaRecord(text);
    if (!p) {
      warnings.push(`CAA record '${text}' is malformed`);
      continue;
    }
    if (p.tag === 'issue' || p.tag === 'issuewild') {
      if (p.tag === 'issue') hasIssue = true;
      else hasWild = true;
      const issuer = caaIssuer(p.value);
      if (issuer !== '' && !ISSUER.test(issuer)) {
        warnings.push(`CAA ${p.tag} '${p.value}' does not name an issuer domain: it allows no CA`);
        continue;
      }
      const list = p.tag === 'issue' ? issue : issueWild;
      if (issuer !== '' && !list.includes(issuer)) list.push(issuer);
    } else if (p.tag === 'iodef') {
      iodef.push(p.value);
      if (!/^(mailto:|https?:)/i.test(p.value)) warnings.push(`CAA iodef '${p.value}' is neither a mailto: nor an http(s): URL`);
    } else if (!KNOWN_TAGS.has(p.tag) && p.critical) {
      warnings.push(`CAA property '${p.tag}' is unknown and marked critical: CAs must refuse to issue (RFC 8659 §4.1)`);
    }
  }
  if (!hasIssue && !hasWild) warnings.push('the CAA records hold no issue or issuewild property: any CA may issue');
  return {
    present: true,
    recordName,
    issuers: issue,
    wildcardIssuers: hasWild ? issueWild : issue,
    iodef,
    records: [...records],
    warnings,
  };
}

const NO_CAA = 'no CAA record at the name or its parents: any certificate authority may issue for it (RFC 8659)';

/**
 * The relevant CAA record set of `domain`: the records of the nearest of the name and its parents that has any
 * (RFC 8659 §3). All names are queried at once (each answer is cached), so the climb costs one round trip.
 * A failed lookup nearer than the record set found leaves a warning, since it might have held the relevant set.
 */
export async function analyseCaa(domain: string, lookup: CaaLookup): Promise<CaaResult> {
  const names = caaClimb(domain);
  const answers = await Promise.allSettled(names.map((n) => lookup(n)));
  const failed: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const a = answers[i];
    if (a.status === 'rejected') {
      failed.push(names[i]);
      continue;
    }
    if (a.value.length === 0) continue;
    const found = analyseCaaRecords(names[i], a.value);
    if (failed.length > 0) found.warnings.unshift(`the CAA lookup of ${failed.join(', ')} failed: a nearer record set may apply`);
    return found;
  }
  const warning = failed.length > 0 ? `the CAA lookup of ${failed.join(', ')} failed: the result may be incomplete` : NO_CAA;
  return { present: false, recordName: '', issuers: [], wildcardIssuers: [], iodef: [], records: [], warnings: [warning] };
}
