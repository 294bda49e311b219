// HTTP handlers for GET /api/v1/dns/{domain} (records + SPF/DKIM/DMARC analysis) and GET /api/v1/email (address validation).
import type { DnsResolver, RecordType } from '../adapters/dns-resolver.js';
import { RECORD_TYPES } from '../adapters/dns-resolver.js';
import { invalidFormat, missingParameter, notFound } from '../http/errors.js';
import type { ApiRequest, Handler } from '../http/types.js';
import { DKIM_SELECTORS, dkimName, isDkimRecord } from '../domain/dkim.js';
import { analyseMailSecurity, type MailSecurityIo } from '../domain/mail-security.js';
import { maskEchoedEmail, parseEmailAddress, type EmailClassifier } from '../domain/email.js';
import { DNS_NAME, parseName } from '../domain/host-name.js';
import { analyseSpf } from '../domain/spf-analysis.js';
import { specialUseReason } from '../domain/special-use-names.js';
import { RefusedTarget } from '../adapters/failures.js';
import type { components } from '../../generated/api.js';

export interface DnsEmailDeps {
  resolver: DnsResolver;
  /** Role, disposable, free-provider and typo classification over the reference lists loaded at start. */
  email: EmailClassifier;
  /** precision: look up special-use and single-label names too (ALLOW_PRIVATE_TARGETS; tests only). */
  allowSpecialUse?: boolean;
  /** MTA-STS policy retrieval under the TLS inspection's guard (src/adapters/mta-sts-fetch.ts). */
  fetchMtaStsPolicy: MailSecurityIo['fetchMtaStsPolicy'];
}

/** The contract's DnsResult (openapi.yaml is the source of truth). */
export type DnsLookupResult = components['schemas']['DnsResult'];

/** The contract's EmailValidationResult (openapi.yaml is the source of truth). */
export type EmailValidationResult = components['schemas']['EmailValidationResult'];

const MAX_EMAIL_INPUT = 320;
/** Domains whose analysed mail security is kept (each only while its answers stay cached). */
const MAX_ANALYSES = 10_000;

type Security = DnsLookupResult['security'];
const MAX_DNS_NAME = 253;

const show = (v: string): string => (v.length > 40 ? `${v.slice(0, 40)}...` : v);

/** `type` query value → distinct record types in the given order; default A. Throws INVALID_FORMAT naming the bad value. */
export function parseRecordTypes(value: unknown): RecordType[] {
  if (value === undefined || value === null) return ['A'];
  if (typeof value !== 'string') throw invalidFormat('type', 'must be given once, as a comma-separated list');
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
export function normaliseLookupDomain(value: unknown): string {
  if (value === undefined || value === null || value === '') throw missingParameter('domain');
  if (typeof value !== 'string') throw invalidFormat('domain', 'must be a host name');
  const name = parseName(value, DNS_NAME);
  if (!name.ok) throw invalidFormat('domain', `not a valid DNS name (at most ${MAX_DNS_NAME} characters): ${name.reason}`);
  return name.name;
}

export function createDnsEmailOperations(deps: DnsEmailDeps): { lookupDns: Handler; validateEmail: Handler } {
  const { resolver } = deps;
  const txt = (name: string): Promise<string[]> =>
    name.length > MAX_DNS_NAME ? Promise.resolve([]) : resolver.query(name, 'TXT').then((a) => a.records.map((r) => r.value));

  /** True as soon as one selector has a key record; false when none has; rejects when none has and a lookup failed. */
  function findDkim(domain: string, lookup: typeof txt): Promise<boolean> {
    const lookups = DKIM_SELECTORS.map((s) => lookup(dkimName(s, domain)));
    return new Promise<boolean>((resolve, reject) => {
      let pending = lookups.length;
      let failure: unknown;
      for (const p of lookups) {
        p.then(
          (values) => {
            if (values.some(isDkimRecord)) resolve(true);
          },
          (err: unknown) => {
            failure ??= err;
          },
        ).finally(() => {
          if (--pending > 0) return;
          if (failure !== undefined) reject(failure);
          else resolve(false);
        });
      }
    });
  }

  /**
   * The mail-security analysis of a domain: ~30 TXT lookups (SPF and its includes, DMARC, DKIM selectors).
   * The result is kept for as long as every answer it was built from stays in the resolver's cache,
   * so it is never older than those answers' TTLs allow.
   */
  const analyses = new Map<string, { security: Security; until: number }>();
  async function analyse(domain: string): Promise<Security> {
    const kept = analyses.get(domain);
    if (kept && performance.now() < kept.until) return kept.security;
    const used: Array<[string, RecordType]> = [];
    const tracked = (name: string) => (used.push([name, 'TXT']), txt(name));
    const query: MailSecurityIo['query'] = (name, type) => (used.push([name, type]), resolver.query(name, type));
    const io = { txt: tracked, query, fetchMtaStsPolicy: deps.fetchMtaStsPolicy };
    const [spf, dkimFound, more] = await Promise.all([analyseSpf(domain, tracked), findDkim(domain, tracked), analyseMailSecurity(io, domain)]);
    const security = { spf, dkimFound, ...more };
    const valid = Math.min(...used.map(([n, t]) => resolver.remainingMs(n, t) ?? 0));
    if (valid > 0) {
      if (analyses.size >= MAX_ANALYSES) analyses.delete(analyses.keys().next().value!);
      analyses.set(domain, { security, until: performance.now() + valid });
    }
    return security;
  }

  const lookupDns = async (req: ApiRequest): Promise<{ status: 200; body: DnsLookupResult }> => {
    const domain = normaliseLookupDomain(req.params?.domain);
    const refused = deps.allowSpecialUse ? null : specialUseReason(domain); // precision: special-use names
    if (refused) throw new RefusedTarget('domain', refused, `${domain} is not looked up: ${refused}`);
    const types = parseRecordTypes(req.query?.type);
    const started = performance.now();
    const [answers, security] = await Promise.allSettled([Promise.all(types.map((t) => resolver.query(domain, t))), analyse(domain)]);
    const queryTimeMs = Math.round(performance.now() - started);
    if (answers.status === 'rejected') throw answers.reason;
    if (answers.value.some((a) => a.rcode === 'NXDOMAIN')) throw notFound('domain does not exist');
    if (security.status === 'rejected') throw security.reason;
    return {
      status: 200,
      body: { domain, records: answers.value.flatMap((a) => a.records), queryTimeMs, security: security.value },
    };
  };

  const validateEmail = async (req: ApiRequest): Promise<{ status: 200; body: EmailValidationResult }> => {
    const address: unknown = req.query?.address;
    if (address === undefined || address === null || address === '') throw missingParameter('address');
    if (typeof address !== 'string') throw invalidFormat('address', 'must be given once');
    // In code points, as openapi.yaml's maxLength counts (JSON Schema): 320 emoji are 640 UTF-16 units.
    if (address.length > MAX_EMAIL_INPUT && [...address].length > MAX_EMAIL_INPUT) {
      throw invalidFormat('address', `must be at most ${MAX_EMAIL_INPUT} characters`);
    }
    const parsed = parseEmailAddress(address);
    let mxRecord = false;
    let aRecord = false;
    // precision: a special-use domain (printer.local) is never sent to the resolver: no MX, no A.
    if (parsed.validFormat && (deps.allowSpecialUse || specialUseReason(parsed.domain) === null)) {
      const [mx, a, aaaa] = await Promise.all([
        resolver.query(parsed.domain, 'MX'),
        resolver.query(parsed.domain, 'A'),
        resolver.query(parsed.domain, 'AAAA'),
      ]);
      // A null MX (RFC 7505: "0 .") says the domain accepts no mail: no MX.
      mxRecord = mx.records.some((r) => r.value !== '.' && r.value !== '');
      aRecord = a.records.length > 0 || aaaa.records.length > 0;
    }
    return {
      status: 200,
      // precision: card numbers masked in the echoed fields; formatProblem says why validFormat is false.
      body: maskEchoedEmail({
        email: parsed.email,
        user: parsed.user,
        domain: parsed.domain,
        validFormat: parsed.validFormat,
        ...(parsed.formatProblem === undefined ? {} : { formatProblem: parsed.formatProblem }),
        mxRecord,
        aRecord,
        ...deps.email.classifyEmail(parsed),
      }),
    };
  };

  return { lookupDns, validateEmail };
}
