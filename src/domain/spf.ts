// SPF record selection and parsing (RFC 7208 §4.5 record selection, §4.6 terms, §5 mechanisms, §6 modifiers).
import net from 'node:net';
import type { components } from '../../generated/api.js';

export type SpfQualifier = '+all' | '-all' | '~all' | '?all';

/** The contract's SpfResult (openapi.yaml is the source of truth). */
export type SpfResult = components['schemas']['SpfResult'];

export interface SpfTerm {
  kind: 'mechanism' | 'modifier';
  /** '+' when not written. Modifiers always have '+'. */
  qualifier: '+' | '-' | '~' | '?';
  /** Lower-cased mechanism or modifier name. */
  name: string;
  /** What follows the name, without the ':' or '=' separator (may start with '/' for a/mx CIDR). */
  value: string;
  raw: string;
}

const LOOKUP_MECHANISMS: ReadonlySet<string> = new Set(['include', 'a', 'mx', 'ptr', 'exists']);
export const SPF_LOOKUP_LIMIT = 10;
const MECHANISMS = new Set(['all', 'include', 'a', 'mx', 'ptr', 'ip4', 'ip6', 'exists']);

export const lookupLimitWarning = (n: number): string =>
  `${n} DNS-querying terms exceed the limit of ${SPF_LOOKUP_LIMIT} (RFC 7208 §4.6.4): receivers return permerror`;

/** The TXT strings that are SPF records: beginning `v=spf1` (any case) followed by a space or the end. */
export function findSpfRecords(txtRecords: readonly string[]): string[] {
  return txtRecords.filter((t) => typeof t === 'string' && /^v=spf1( |$)/i.test(t));
}

/** The terms after the version, split on whitespace. */
export function spfTerms(record: string): SpfTerm[] {
  const out: SpfTerm[] = [];
  for (const raw of record.split(/\s+/).slice(1)) {
    if (!raw) continue;
    const mod = /^([a-z][a-z0-9_.-]*)=(.*)$/i.exec(raw);
    if (mod) {
      out.push({ kind: 'modifier', qualifier: '+', name: mod[1].toLowerCase(), value: mod[2], raw });
      continue;
    }
    const m = /^([+\-~?]?)([^:/]*)/.exec(raw) as RegExpExecArray;
    const sep = raw.slice(m[1].length + m[2].length);
    out.push({
      kind: 'mechanism',
      qualifier: (m[1] || '+') as SpfTerm['qualifier'],
      name: m[2].toLowerCase(),
      value: sep.startsWith(':') ? sep.slice(1) : sep,
      raw,
    });
  }
  return out;
}

/** Whether a term costs a DNS query counted against the limit of RFC 7208 §4.6.4 (include, a, mx, ptr, exists, redirect). */
const isLookupTerm = (t: SpfTerm): boolean =>
  t.kind === 'mechanism' ? LOOKUP_MECHANISMS.has(t.name) : t.name === 'redirect';

/**
 * The DNS-querying terms an evaluation can reach (RFC 7208 §4.6.4): mechanisms before the first `all`
 * (evaluation ends there, §5.1), and redirect= only when there is no `all` (§6.1). exp= never counts.
 */
export function lookupTermsReached(terms: readonly SpfTerm[]): SpfTerm[] {
  const allAt = terms.findIndex((t) => t.kind === 'mechanism' && t.name === 'all');
  const reached = terms.filter((t, i) => (t.kind === 'mechanism' ? allAt < 0 || i < allAt : allAt < 0));
  return reached.filter(isLookupTerm);
}

/** Domain argument of include/exists/redirect, or of a/mx/ptr before any CIDR; "" when absent. */
export const termDomain = (t: SpfTerm): string => (t.value.startsWith('/') ? '' : t.value.split('/')[0]);

function cidrOk(value: string, v6: boolean): boolean {
  const [addr, len, extra] = value.split('/');
  if (extra !== undefined) return false;
  const max = v6 ? 128 : 32;
  const lenOk = len === undefined || (/^\d{1,3}$/.test(len) && Number(len) <= max);
  return lenOk && (v6 ? net.isIPv6(addr) : net.isIPv4(addr));
}

/** a and mx arguments (RFC 7208 §5.3, §5.4): [":" domain] ["/" 0-32] ["//" 0-128]. */
function dualCidrOk(t: SpfTerm): boolean {
  const m = /^([^/]*)(?:\/(\d{1,2}))?(?:\/\/(\d{1,3}))?$/.exec(t.value);
  if (!m) return false;
  if (/^[+\-~?]?[a-z]+:/i.test(t.raw) && m[1] === '') return false; // "a:" promises a domain
  return (m[2] === undefined || Number(m[2]) <= 32) && (m[3] === undefined || Number(m[3]) <= 128);
}

function termWarning(t: SpfTerm): string | null {
  if (t.kind === 'modifier') return null; // unknown modifiers are ignored (RFC 7208 §6)
  if (!MECHANISMS.has(t.name)) return `unknown mechanism '${t.raw}' (permerror)`;
  if (t.name === 'ptr') return `'${t.raw}': the ptr mechanism is slow and unreliable and should not be used (RFC 7208 §5.5)`;
  if (t.name === 'ip4' && !cidrOk(t.value, false)) return `'${t.raw}': invalid IPv4 network (permerror)`;
  if (t.name === 'ip6' && !cidrOk(t.value, true)) return `'${t.raw}': invalid IPv6 network (permerror)`;
  if ((t.name === 'include' || t.name === 'exists') && !t.value) return `'${t.raw}' needs a domain (permerror)`;
  if ((t.name === 'a' || t.name === 'mx') && !dualCidrOk(t)) return `'${t.raw}': invalid domain or prefix length (permerror)`;
  return null;
}

/** Parse the SPF record among a domain's TXT strings. Pure and total. */
export function parseSpf(txtRecords: readonly string[]): SpfResult {
  const found = findSpfRecords(txtRecords);
  if (found.length === 0) {
    return { present: false, rawRecord: '', qualifier: '', mechanisms: [], dnsLookups: 0, warnings: ['no SPF record found'] };
  }
  const rawRecord = found[0];
  const warnings: string[] = [];
  if (found.length > 1) {
    warnings.push(`${found.length} SPF records found: receivers return permerror (RFC 7208 §4.5); analysed the first`);
  }
  let all: SpfTerm | undefined;
  let afterAllWarned = false;
  const terms = spfTerms(rawRecord);
  const dnsLookups = lookupTermsReached(terms).length;
  const mechanisms: string[] = [];
  const modifierCount = new Map<string, number>();
  for (const t of terms) {
    if (t.kind === 'mechanism' && t.name === 'all') {
      if (t.value) warnings.push(`'${t.raw}': all takes no argument (permerror)`);
      if (all) warnings.push(`'${t.raw}': a second all mechanism is never evaluated`);
      else all = t;
      continue;
    }
    mechanisms.push(t.raw);
    if (all && t.kind === 'mechanism' && !afterAllWarned) {
      warnings.push(`mechanisms after '${all.raw}' are never evaluated`);
      afterAllWarned = true;
    }
    if (t.kind === 'modifier') modifierCount.set(t.name, (modifierCount.get(t.name) ?? 0) + 1);
    const w = termWarning(t);
    if (w) warnings.push(w);
  }
  for (const name of ['redirect', 'exp']) {
    if ((modifierCount.get(name) ?? 0) > 1) warnings.push(`the ${name}= modifier appears more than once (permerror)`);
  }
  if (all?.qualifier === '+') warnings.push(`'${all.raw}' lets any host send mail for the domain`);
  if (all && modifierCount.has('redirect')) warnings.push(`redirect= is ignored because the record has '${all.raw}'`);
  if (dnsLookups > SPF_LOOKUP_LIMIT) warnings.push(lookupLimitWarning(dnsLookups));
  const qualifier: SpfQualifier = all ? (`${all.qualifier}all` as SpfQualifier) : '?all';
  return { present: true, rawRecord, qualifier, mechanisms, dnsLookups, warnings };
}
