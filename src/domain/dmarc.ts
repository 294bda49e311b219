// DMARC policy record parsing (RFC 7489 §6.3 tags, §6.6.3 record discovery rules).
import { getDomain } from 'tldts';
import type { components } from '../../generated/api.js';

type DmarcPolicy = 'none' | 'quarantine' | 'reject';

/** The contract's DmarcResult (openapi.yaml is the source of truth). */
export type DmarcResult = components['schemas']['DmarcResult'];
/** What one name's record says, before discovery adds where it came from. */
export type ParsedDmarc = Omit<DmarcResult, 'recordName' | 'organisationalDomain'>;

const POLICIES: ReadonlySet<string> = new Set(['none', 'quarantine', 'reject']);

/** RFC 7489 §6.4: the record starts with the tag v, whose value is exactly DMARC1 (%x44.4d.41.52.43.31, case-sensitive). */
const DMARC_VERSION = /^[vV][ \t]*=[ \t]*DMARC1[ \t]*(;|$)/;
/** What a person may have meant as a version tag; receivers discard such records (§6.6.3 step 4). */
const NEAR_VERSION = /^\s*v\s*=\s*dmarc1\s*(;|$)/i;

/** The TXT strings that are DMARC records: starting with the version tag `v=DMARC1` (RFC 7489 §6.6.3 step 4). */
function findDmarcRecords(txtRecords: readonly string[]): string[] {
  return txtRecords.filter((t) => typeof t === 'string' && DMARC_VERSION.test(t));
}

/** TXT strings that look like DMARC records but that receivers discard (`v=dmarc1`, leading space, ...). */
const nearMisses = (txtRecords: readonly string[]): string[] =>
  txtRecords.filter((t) => typeof t === 'string' && NEAR_VERSION.test(t) && !DMARC_VERSION.test(t));

/** Tag list (RFC 7489 §6.4): `tag=value` pairs separated by ';'; tag names lower-cased, values trimmed. */
export function dmarcTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    if (name && !tags.has(name)) tags.set(name, part.slice(eq + 1).trim());
  }
  return tags;
}

/** First mailto: address of a rua/ruf URI list, without scheme and `!size`; "" when none. */
export function firstMailto(uriList: string): string {
  for (const uri of uriList.split(',')) {
    const u = uri.trim();
    if (!/^mailto:/i.test(u)) continue;
    let addr = u.slice('mailto:'.length).split('!')[0].split('?')[0].trim();
    try {
      addr = decodeURIComponent(addr);
    } catch {
      /* keep as written */
    }
    if (addr) return addr;
  }
  return '';
}

/** The policy receivers apply to mail from the queried name, and where it comes from. */
export interface AppliedPolicy {
  /** '' when no record applies or the applying tag is not a known policy. */
  policy: DmarcPolicy | '';
  /** 'sp' for a name under its organisational domain's record that sets sp=; 'p' otherwise. */
  tag: 'p' | 'sp';
  /** The record's pct= as written; undefined when absent (all mail). */
  pct: string | undefined;
}

/**
 * RFC 7489 §6.3 and §6.6.3: a record found at _dmarc of the name itself applies its `p`; one found at the organisational
 * domain (the name is a subdomain of it) applies its `sp`, or `p` when `sp` is absent. The one rule every check of
 * "the policy" goes through.
 */
function applies(record: Pick<ParsedDmarc, 'policy' | 'subdomainPolicy'>, subdomain: boolean): { policy: DmarcPolicy | ''; tag: 'p' | 'sp' } {
  return subdomain && record.subdomainPolicy !== '' ? { policy: record.subdomainPolicy, tag: 'sp' } : { policy: record.policy, tag: 'p' };
}

/** The DMARC policy that applies to `domain`, the name `dmarc` (discoverDmarc's result) was discovered for. */
export function appliedPolicy(dmarc: Pick<DmarcResult, 'present' | 'rawRecord' | 'policy' | 'subdomainPolicy' | 'recordName'>, domain: string): AppliedPolicy {
  if (!dmarc.present) return { policy: '', tag: 'p', pct: undefined };
  const inherited = dmarc.recordName !== `_dmarc.${domain.toLowerCase().replace(/\.$/, '')}`;
  return { ...applies(dmarc, inherited), pct: dmarcTags(dmarc.rawRecord).get('pct') };
}

/** Only _dmarc.DOMAIN is looked up; the organisational domain's record is for a lookup of that domain to show. */
const NO_RECORD =
  "no DMARC record at _dmarc of this name: receivers use its organisational domain's record instead (RFC 7489 §6.6.3) " +
  'and apply no DMARC policy when that has none either';

/**
 * Parse the DMARC record among the TXT strings of _dmarc.DOMAIN. Pure and total. `forSubdomain`: the record is the
 * organisational domain's, read for a name under it, so its warnings judge the policy that applies there (`sp`).
 */
export function parseDmarc(txtRecords: readonly string[], forSubdomain = false): ParsedDmarc {
  const found = findDmarcRecords(txtRecords);
  if (found.length === 0) {
    const ignored = nearMisses(txtRecords).map((t) => `'${t}' is ignored by receivers: a DMARC record must start with exactly v=DMARC1 (RFC 7489 §6.4)`);
    return {
      present: false,
      rawRecord: '',
      policy: '',
      subdomainPolicy: '',
      reportingEmail: '',
      warnings: [NO_RECORD, ...ignored],
    };
  }
  const rawRecord = found[0];
  const warnings: string[] = [];
  if (found.length > 1) {
    warnings.push(`${found.length} DMARC records found: receivers ignore DMARC for the domain (RFC 7489 §6.6.3); analysed the first`);
  }
  const tags = dmarcTags(rawRecord);

  const p = (tags.get('p') ?? '').toLowerCase();
  let policy: DmarcPolicy | '' = '';
  if (!tags.has('p')) warnings.push('the required p= tag is missing');
  else if (!POLICIES.has(p)) warnings.push(`invalid policy p=${tags.get('p')}: must be none, quarantine or reject`);
  else policy = p as DmarcPolicy;

  const sp = (tags.get('sp') ?? '').toLowerCase();
  let subdomainPolicy: DmarcPolicy | '' = '';
  if (tags.has('sp')) {
    if (POLICIES.has(sp)) subdomainPolicy = sp as DmarcPolicy;
    else warnings.push(`invalid subdomain policy sp=${tags.get('sp')}: must be none, quarantine or reject (receivers apply p= to subdomains)`);
  }
  const applied = applies({ policy, subdomainPolicy }, forSubdomain);
  if (applied.policy === 'none') warnings.push(`${applied.tag}=none only monitors: failing mail is still delivered`);

  const rua = tags.get('rua');
  const reportingEmail = rua === undefined ? '' : firstMailto(rua);
  if (rua === undefined) warnings.push('no rua= tag: no aggregate reports are sent');
  else if (!reportingEmail) warnings.push('rua= has no mailto: address');

  const pct = tags.get('pct');
  if (pct !== undefined) {
    if (!/^\d{1,3}$/.test(pct) || Number(pct) > 100) warnings.push(`invalid pct=${pct}: must be an integer 0-100`);
    else if (Number(pct) < 100) warnings.push(`pct=${pct}: the policy applies to only ${Number(pct)}% of failing mail`);
  }
  return { present: true, rawRecord, policy, subdomainPolicy, reportingEmail, warnings };
}

/** TXT strings of a name; [] when the name has none or does not exist. May reject on upstream failure. */
export type TxtLookup = (name: string) => Promise<string[]>;

/**
 * The organisational domain (RFC 7489 §3.2): the registrable domain under the public suffix list (ICANN and private
 * sections). A name under an unlisted top-level label counts that label as the suffix. Null for a public suffix itself.
 */
export function organisationalDomain(domain: string): string | null {
  return getDomain(domain.toLowerCase().replace(/\.$/, ''), { allowPrivateDomains: true });
}

/** Domains of the mailto: destinations of a rua/ruf URI list. */
export function mailtoDomains(uriList: string): string[] {
  const out: string[] = [];
  for (const uri of uriList.split(',')) {
    const u = uri.trim();
    if (!/^mailto:/i.test(u)) continue;
    const addr = u.slice('mailto:'.length).split('!')[0].split('?')[0].trim();
    const at = addr.lastIndexOf('@');
    const domain = at < 0 ? '' : addr.slice(at + 1).toLowerCase().replace(/\.$/, '');
    if (domain && !out.includes(domain)) out.push(domain);
  }
  return out;
}

/** External report destinations checked at most: each is one lookup, and a record may list any number. */
const MAX_EXTERNAL_DESTINATIONS = 10;

/** The name where a report destination authorises reports about `policyDomain` (RFC 7489 §7.1). */
const reportAuthorisationName = (policyDomain: string, destination: string): string => `${policyDomain}._report._dmarc.${destination}`;

/**
 * rua/ruf destinations outside the policy domain's organisational domain that have not published the RFC 7489 §7.1
 * authorisation record (a `v=DMARC1` TXT at POLICYDOMAIN._report._dmarc.DESTINATION): receivers send them no reports.
 * All authorisation lookups run at once.
 */
async function externalDestinationWarnings(record: string, policyDomain: string, txt: TxtLookup): Promise<string[]> {
  const tags = dmarcTags(record);
  const org = organisationalDomain(policyDomain) ?? policyDomain;
  const external = [...new Set([...mailtoDomains(tags.get('rua') ?? ''), ...mailtoDomains(tags.get('ruf') ?? '')])]
    .filter((d) => (organisationalDomain(d) ?? d) !== org)
    .slice(0, MAX_EXTERNAL_DESTINATIONS);
  const checks = await Promise.all(
    external.map(async (d) => {
      const name = reportAuthorisationName(policyDomain, d);
      if (name.length > 253) return `report destination ${d} cannot publish an authorisation record for ${policyDomain}: the name is too long`;
      try {
        const authorised = findDmarcRecords(await txt(name)).length > 0;
        return authorised ? null : `report destination ${d} is outside ${org} and has no authorisation record at ${name} (RFC 7489 §7.1): receivers send it no reports`;
      } catch {
        return `the authorisation record of report destination ${d} (${name}) could not be looked up`;
      }
    }),
  );
  return checks.filter((w): w is string => w !== null);
}

/**
 * DMARC record discovery (RFC 7489 §6.6.3): the record at _dmarc.DOMAIN, else the one at _dmarc of the organisational
 * domain (both looked up at once), saying which name it came from; then the §7.1 check of external report destinations.
 * Rejects when the lookup of _dmarc.DOMAIN fails; a failed organisational lookup is a warning.
 */
export async function discoverDmarc(domain: string, txt: TxtLookup): Promise<DmarcResult> {
  const name = domain.toLowerCase().replace(/\.$/, '');
  const org = organisationalDomain(name);
  const fallback = org !== null && org !== name;
  const orgLookup = fallback ? txt(`_dmarc.${org}`) : null;
  orgLookup?.catch(() => undefined); // awaited below only when needed
  const own = parseDmarc(await txt(`_dmarc.${name}`));
  if (own.present) {
    const warnings = [...own.warnings, ...(await externalDestinationWarnings(own.rawRecord, name, txt))];
    return { ...own, warnings, recordName: `_dmarc.${name}`, organisationalDomain: org ?? name };
  }
  const ownIgnored = own.warnings.filter((w) => w !== NO_RECORD);
  if (!fallback || orgLookup === null) {
    return { ...own, warnings: [`no DMARC record at _dmarc.${name}: receivers apply no DMARC policy (RFC 7489 §6.6.3)`, ...ownIgnored], recordName: '', organisationalDomain: org ?? name };
  }
  let inherited: ParsedDmarc;
  try {
    inherited = parseDmarc(await orgLookup, true);
  } catch {
    return { ...own, warnings: [`no DMARC record at _dmarc.${name}, and the lookup of its organisational domain's record at _dmarc.${org} failed`, ...ownIgnored], recordName: '', organisationalDomain: org };
  }
  if (!inherited.present) {
    return {
      ...own,
      warnings: [`no DMARC record at _dmarc.${name} nor at its organisational domain's _dmarc.${org}: receivers apply no DMARC policy (RFC 7489 §6.6.3)`, ...ownIgnored],
      recordName: '',
      organisationalDomain: org,
    };
  }
  const applied = applies(inherited, true);
  const note = `no DMARC record at _dmarc.${name}: receivers apply the organisational domain's record at _dmarc.${org} (RFC 7489 §6.6.3)${applied.policy ? `, with policy ${applied.policy}${applied.tag === 'sp' ? ' (its sp=)' : ''}` : ''}`;
  const warnings = [note, ...ownIgnored, ...inherited.warnings, ...(await externalDestinationWarnings(inherited.rawRecord, org, txt))];
  return { ...inherited, warnings, recordName: `_dmarc.${org}`, organisationalDomain: org };
}
