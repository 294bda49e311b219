// Email operation (openapi.yaml tag Email): address syntax (RFC 5321/5322), MX (RFC 7505 null MX) and A/AAAA, list
// checks, and on request SMTP mailbox verification (its deliverability object).
import type { DnsResolver } from '../adapters/dns/resolver.js';
import type { MailboxVerifier } from '../adapters/smtp/mailbox-verifier.js';
import type { Limiter } from '../accounts/limits.js';
import { maskCardNumbers } from '../domain/card.js';
import { maskEchoedEmail, parseEmailAddress, type EmailClassifier, type ParsedEmail } from '../domain/email.js';
import { verdictWithoutSession, type Deliverability } from '../domain/smtp-reply.js';
import { specialUseReason } from '../domain/special-use-names.js';
import { UpstreamFailure } from '../errors.js';
import { clientGone } from './client-gone.js';
import { pace } from './pacing.js';
import { keyOf, type OperationHandler } from './types.js';

export interface EmailDeps {
  resolver: DnsResolver;
  /** Role, disposable, free-provider and typo classification over the lists loaded now: read once per request. */
  email: () => EmailClassifier;
  /** Look up special-use and single-label domains too (ALLOW_PRIVATE_TARGETS; test set-ups only). */
  allowSpecialUse?: boolean;
  /** SMTP mailbox verification; null when the operator has it off (SMTP_CHECK=off). */
  verifier?: MailboxVerifier | null;
  /** The per-key daily SMTP quota (docs/limits.md): charged before any address is verified; absent: none. */
  smtpQuota?: Pick<Limiter, 'consumeSmtp'>;
  /** The address parser; default parseEmailAddress (a bulk passes one that parses each of its items once). */
  parse?: (address: string) => ParsedEmail;
}

/** Domains verified at once by one request (each domain's sessions are bounded per MX host besides). */
const SMTP_DOMAIN_CONCURRENCY = 16;

export interface EmailOperations {
  validateEmail: OperationHandler<'validateEmail'>;
  /**
   * The deliverability of each address (same order): `not_checked` when not requested, turned off or malformed, else
   * the verifier's verdict, the addresses of one domain verified together (shared sessions, one catch-all probe).
   * `signal`: the client went away (its sessions end, QUIT sent).
   */
  deliverabilities(addresses: readonly string[], requested: boolean, signal?: AbortSignal): Promise<Deliverability[]>;
  /** How many of the addresses an SMTP verification would ask about (well-formed, at a name that is looked up): its charge. */
  verifiable(addresses: readonly string[]): Promise<number>;
}

/**
 * Each domain's addresses verified together (shared sessions, one catch-all probe), SMTP_DOMAIN_CONCURRENCY domains
 * at once; the verdicts written into `out` at the addresses' indexes.
 */
async function verifyByDomain(
  verifier: MailboxVerifier,
  byDomain: Map<string, Array<{ index: number; user: string }>>,
  out: Deliverability[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const domains = [...byDomain];
  let next = 0;
  const worker = async (): Promise<void> => {
    // Paced before each domain (pacing.ts): starting a verification (its route, plan and first connections) costs a
    // few hundred microseconds, and sixteen workers begin at once.
    for (await pace(); next < domains.length; await pace()) {
      const [domain, items] = domains[next++];
      let verdicts: Deliverability[];
      try {
        verdicts = await verifier.verify(domain, items.map((i) => i.user), signal);
      } catch (err) {
        // The domain's MX answer was there a moment ago (the address checks asked for it): no mail server reached.
        if (!(err instanceof UpstreamFailure)) throw err;
        verdicts = items.map(() => verdictWithoutSession('unknown', 'connection_failed'));
      }
      // An implicit MX is the domain itself: a card number in it is masked here as in `domain`.
      items.forEach((item, i) => (out[item.index] = { ...verdicts[i], mxHost: verdicts[i].mxHost === null ? null : maskCardNumbers(verdicts[i].mxHost!) }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(SMTP_DOMAIN_CONCURRENCY, domains.length) }, worker));
}

/** Whether the domain has a usable MX (RFC 7505: a null MX "0 ." says it accepts no mail) and an A or AAAA record. */
async function mailRecords(resolver: DnsResolver, domain: string): Promise<{ mxRecord: boolean; aRecord: boolean }> {
  const [mx, a, aaaa] = await Promise.all([resolver.query(domain, 'MX'), resolver.query(domain, 'A'), resolver.query(domain, 'AAAA')]);
  // A domain's answers resume every bulk item waiting on them in one drain of microtasks: paced (pacing.ts).
  await pace();
  return { mxRecord: mx.records.some((r) => r.value !== '.' && r.value !== ''), aRecord: a.records.length > 0 || aaaa.records.length > 0 };
}

export function createEmailOperations(deps: EmailDeps): EmailOperations {
  const { resolver } = deps;
  const parse = deps.parse ?? parseEmailAddress;
  /** A domain the DNS operation refuses (printer.local) is never looked up, for mail servers neither. */
  const lookedUp = (parsed: ParsedEmail) => parsed.validFormat && (deps.allowSpecialUse || specialUseReason(parsed.domain) === null);

  /** The verdict made without a session, or null when the verifier is to be asked. */
  function withoutSession(parsed: ParsedEmail, requested: boolean): Deliverability | null {
    if (!requested) return verdictWithoutSession('not_checked', 'not_requested');
    if (!deps.verifier) return verdictWithoutSession('not_checked', 'disabled');
    if (!parsed.validFormat) return verdictWithoutSession('not_checked', 'invalid_format');
    if (!lookedUp(parsed)) return verdictWithoutSession('undeliverable', 'no_mail_server');
    return null;
  }

  async function deliverabilities(addresses: readonly string[], requested: boolean, signal?: AbortSignal): Promise<Deliverability[]> {
    const out = new Array<Deliverability>(addresses.length);
    const byDomain = new Map<string, Array<{ index: number; user: string }>>();
    for (let index = 0; index < addresses.length; index++) {
      // A bulk's thousand addresses: other requests' I/O goes in between once the turn is long (pacing.ts).
      if (index > 0) await pace();
      const parsed = parse(addresses[index]);
      const settled = withoutSession(parsed, requested);
      if (settled) out[index] = settled;
      else {
        const group = byDomain.get(parsed.domain);
        if (group) group.push({ index, user: parsed.user });
        else byDomain.set(parsed.domain, [{ index, user: parsed.user }]);
      }
    }
    await verifyByDomain(deps.verifier!, byDomain, out, signal);
    return out;
  }

  /** Paced like the items (pacing.ts): a bulk's thousand syntax checks before its quota is charged. */
  async function verifiable(addresses: readonly string[]): Promise<number> {
    let n = 0;
    for (let index = 0; index < addresses.length; index++) {
      if (index > 0) await pace();
      if (withoutSession(parse(addresses[index]), true) === null) n++;
    }
    return n;
  }

  return {
    deliverabilities,
    verifiable,
    /** The validator guarantees the address, 1-320 characters (absent: MISSING_PARAMETER, empty: INVALID_FORMAT). */
    async validateEmail(context, koa?: unknown) {
      const { request } = context;
      const address = request.query.address;
      const email = deps.email(); // the lists at the start of the request, whatever a reload swaps meanwhile
      const parsed = parse(address);
      const smtp = request.query.smtp === 'true';
      // The SMTP quota first: a refused request has looked nothing up (a bulk's items arrive here without smtp).
      if (smtp && deps.smtpQuota && withoutSession(parsed, true) === null) await deps.smtpQuota.consumeSmtp(keyOf(context), 1);
      // A special-use domain (printer.local) is never sent to the resolver: no MX, no A (openapi.yaml validateEmail).
      const { mxRecord, aRecord } = lookedUp(parsed) ? await mailRecords(resolver, parsed.domain) : { mxRecord: false, aRecord: false };
      const [deliverability] = await deliverabilities([address], smtp, smtp ? clientGone(koa) : undefined);
      return {
        status: 200,
        // Card numbers are masked in the echoed fields; formatProblem says why validFormat is false.
        body: {
          ...maskEchoedEmail({
            email: parsed.email,
            user: parsed.user,
            domain: parsed.domain,
            validFormat: parsed.validFormat,
            ...(parsed.formatProblem === undefined ? {} : { formatProblem: parsed.formatProblem }),
            mxRecord,
            aRecord,
            ...email.classifyEmail(parsed),
          }),
          deliverability,
        },
      };
    },
  };
}
