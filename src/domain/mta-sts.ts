// MTA-STS (RFC 8461): the _mta-sts TXT record (§3.1), the policy file (§3.2), and MX coverage by its patterns (§4.1).
import { dmarcTags } from './dmarc.js';

type MtaStsMode = 'enforce' | 'testing' | 'none';

export interface MtaStsPolicy {
  mode: MtaStsMode;
  mx: string[];
  maxAge: number;
}

export interface MtaStsResult {
  /** A record starting with `v=STSv1` exists at `_mta-sts.DOMAIN`. */
  present: boolean;
  rawRecord: string;
  /** The record's `id=`; empty when absent. */
  id: string;
  /** The policy was fetched from https://mta-sts.DOMAIN/.well-known/mta-sts.txt and parsed. */
  policyFound: boolean;
  /** The policy's mode; empty without a policy. */
  mode: MtaStsMode | '';
  /** The policy's mx patterns. */
  mx: string[];
  /** The policy's max_age in seconds; null without a policy. */
  maxAge: number | null;
  warnings: string[];
}

/** What fetching the policy file gave: its body, or why there is none (a fixed phrase, no library text). */
export type PolicyFetch = { ok: true; body: string } | { ok: false; reason: string };

const VERSION = /^v=STSv1[ \t]*(;|$)/;
const ID = /^[A-Za-z0-9]{1,32}$/;
/** RFC 8461 §3.2: max_age is at most 31557600 seconds (about a year). */
const MAX_AGE_LIMIT = 31_557_600;
/** A max_age under a day makes the policy lapse between deliveries (the RFC suggests weeks). */
const SHORT_MAX_AGE = 86_400;

export const mtaStsName = (domain: string): string => `_mta-sts.${domain}`;
export const mtaStsPolicyHost = (domain: string): string => `mta-sts.${domain}`;
export const MTA_STS_POLICY_PATH = '/.well-known/mta-sts.txt';

/** The MTA-STS record among the TXT strings of _mta-sts.DOMAIN. */
function parseMtaStsRecord(txtRecords: readonly string[]): { present: boolean; rawRecord: string; id: string; warnings: string[] } {
  const found = txtRecords.filter((t) => typeof t === 'string' && VERSION.test(t));
  if (found.length === 0) return { present: false, rawRecord: '', id: '', warnings: [] };
  const warnings: string[] = [];
  if (found.length > 1) warnings.push(`${found.length} MTA-STS records found: senders then assume none (RFC 8461 §3.1); analysed the first`);
  const rawRecord = found[0];
  const id = dmarcTags(rawRecord).get('id') ?? '';
  if (id === '') warnings.push('the required id= tag is missing');
  else if (!ID.test(id)) warnings.push(`id=${id} must be 1-32 letters and digits`);
  return { present: true, rawRecord, id, warnings };
}

/** Parse a policy file (RFC 8461 §3.2): `key: value` lines. Returns the policy, or the reasons it is invalid. */
export function parseMtaStsPolicy(body: string): { policy: MtaStsPolicy | null; errors: string[] } {
  const fields = new Map<string, string[]>();
  for (const line of body.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    fields.set(key, [...(fields.get(key) ?? []), line.slice(colon + 1).trim()]);
  }
  const errors: string[] = [];
  const one = (k: string): string | undefined => fields.get(k)?.[0];
  if (one('version') !== 'STSv1') errors.push('the policy has no "version: STSv1" line');
  const mode = one('mode');
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') errors.push(`the policy mode ${mode === undefined ? 'is missing' : `"${mode}" is not enforce, testing or none`}`);
  const ageText = one('max_age');
  const maxAge = ageText !== undefined && /^\d{1,10}$/.test(ageText) ? Number(ageText) : NaN;
  if (!(maxAge >= 0 && maxAge <= MAX_AGE_LIMIT)) errors.push(`the policy max_age ${ageText === undefined ? 'is missing' : `"${ageText}" is not 0-${MAX_AGE_LIMIT}`}`);
  const mx = (fields.get('mx') ?? []).map((p) => p.toLowerCase().replace(/\.$/, '')).filter((p) => p !== '');
  if (mx.length === 0 && mode !== 'none') errors.push('the policy lists no mx patterns');
  if (errors.length > 0) return { policy: null, errors };
  return { policy: { mode: mode as MtaStsMode, mx, maxAge }, errors };
}

/** An MX host matches a pattern: exactly, or `*.` standing for one leftmost label (RFC 8461 §4.1). */
export function mxMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '');
  const h = host.toLowerCase().replace(/\.$/, '');
  if (p.startsWith('*.')) {
    const dot = h.indexOf('.');
    return dot > 0 && h.slice(dot + 1) === p.slice(2);
  }
  return p === h;
}

/**
 * Judge the record, the fetched policy and the domain's MX hosts together. Pure.
 * Warnings: record without a usable policy, mode testing or none, MX hosts the patterns do not cover, short max_age.
 */
export function analyseMtaSts(txtRecords: readonly string[], fetched: PolicyFetch | null, mxHosts: readonly string[]): MtaStsResult {
  const record = parseMtaStsRecord(txtRecords);
  const base: MtaStsResult = { ...record, policyFound: false, mode: '', mx: [], maxAge: null };
  if (!record.present) {
    return { ...base, warnings: ['no MTA-STS record at _mta-sts: sending servers may deliver without TLS (RFC 8461)'] };
  }
  const warnings = [...record.warnings];
  if (fetched === null || !fetched.ok) {
    warnings.push(`the record announces MTA-STS but the policy could not be fetched${fetched && !fetched.ok ? `: ${fetched.reason}` : ''}: senders apply none`);
    return { ...base, warnings };
  }
  const { policy, errors } = parseMtaStsPolicy(fetched.body);
  if (!policy) {
    warnings.push(...errors.map((e) => `${e}: senders ignore it`));
    return { ...base, warnings };
  }
  if (policy.mode === 'testing') warnings.push('policy mode is testing: failures are reported, mail is still delivered without TLS');
  if (policy.mode === 'none') warnings.push('policy mode is none: the domain has withdrawn its MTA-STS policy');
  if (policy.mode !== 'none') {
    const hosts = mxHosts.filter((h) => h !== '' && h !== '.');
    const uncovered = hosts.filter((h) => !policy.mx.some((p) => mxMatches(p, h)));
    if (uncovered.length > 0) warnings.push(`MX host${uncovered.length > 1 ? 's' : ''} ${uncovered.join(', ')} not covered by the policy's mx patterns: senders in enforce mode will not deliver there`);
    if (hosts.length === 0) warnings.push('the domain has no MX host for the policy to cover');
  }
  if (policy.maxAge < SHORT_MAX_AGE) warnings.push(`policy max_age=${policy.maxAge} is under a day: senders forget the policy between deliveries`);
  return { ...base, policyFound: true, mode: policy.mode, mx: policy.mx, maxAge: policy.maxAge, warnings };
}
