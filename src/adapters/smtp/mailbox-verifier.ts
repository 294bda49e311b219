// Mailbox verification over SMTP (RFC 5321 §5.1 MX selection and implicit MX, RFC 7505 null MX): MX hosts in order
// under the target guard, several recipients per session, one catch-all probe per domain after the real ones, a
// per-host session limit and a verdict cache. Never sends a message (smtp-client.ts stops at RCPT).
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import {
  catchAllOf,
  isDefinitive,
  recipientDeliverability,
  recipientVerdict,
  sessionRefusal,
  tooManyRecipients,
  verdictWithoutSession,
  type Deliverability,
  type SmtpReply,
} from '../../domain/smtp-reply.js';
import { parseTlsTarget } from '../../domain/tls-target.js';
import { RefusedTarget, UpstreamFailure } from '../../errors.js';
import type { DnsResolver } from '../dns/resolver.js';
import { addressResolver, guardedAddress } from '../tls/target-guard.js';
import { createHostSlots, type HostSlots } from './host-slots.js';
import { runSmtpSession, type SessionOutcome, type SmtpSessionOptions } from './smtp-client.js';

export interface MailboxVerifierOptions {
  resolver: Pick<DnsResolver, 'query'>;
  /** ALLOW_PRIVATE_TARGETS: MX hosts at private addresses are contacted (tests only). */
  allowPrivate: boolean;
  port: number;
  heloName: string;
  mailFrom: string;
  timeoutMs: number;
  maxPerHost: number;
  proxy: { host: string; port: number } | null;
  logger?: { debug: (obj: object, msg?: string) => void };
  /** Default VERDICT_TTL_MS. */
  definitiveTtlMs?: number;
  /** Default UNKNOWN_TTL_MS. */
  unknownTtlMs?: number;
  /** Replaces runSmtpSession (unit tests of the orchestration). */
  session?: (o: SmtpSessionOptions) => Promise<SessionOutcome>;
}

export interface MailboxVerifier {
  /** The verdict for each local part at `domain`, in the order given (duplicates answered alike). */
  verify(domain: string, localParts: readonly string[]): Promise<Deliverability[]>;
  stats(): { sessions: number; cacheHits: number; cacheMisses: number; cacheEntries: number };
}

/**
 * How long a verdict is reused (docs/smtp.md). A definitive one (the server judged
 * the mailbox, or DNS says no mail goes there) for 6 hours: mailboxes come and go over days, and asking a server
 * again about the same address within hours adds to the verifier's reputation cost for no news.
 */
const VERDICT_TTL_MS = 6 * 3600_000;
/**
 * An `unknown` one (greylisted, blocked, timeout, unreachable) for 10 minutes: long enough to cover the usual
 * greylisting delay (postgrey's default is 5 minutes, so asking sooner is deferred again and counts against the IP),
 * short enough that a retry after it gets a real answer.
 */
const UNKNOWN_TTL_MS = 10 * 60_000;
/** Real recipients asked in one session at most (RFC 5321 §4.5.3.1.8 has servers take at least 100). */
const RECIPIENTS_PER_SESSION = 20;

/** Where mail for a domain goes: MX hosts by preference, the domain itself (implicit MX), or nowhere. */
type Route = { kind: 'hosts'; hosts: string[] } | { kind: 'null_mx' } | { kind: 'none' };

async function routeOf(resolver: Pick<DnsResolver, 'query'>, domain: string): Promise<Route> {
  const mx = await resolver.query(domain, 'MX');
  const exchanges = mx.records.filter((r) => r.type === 'MX');
  // RFC 7505 §3: a null MX ("0 .") is the only MX of a domain that takes no mail.
  const real = exchanges.filter((r) => r.value !== '.' && r.value !== '');
  if (exchanges.length > 0 && real.length === 0) return { kind: 'null_mx' };
  if (real.length > 0) {
    const ordered = [...real].sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0));
    return { kind: 'hosts', hosts: [...new Set(ordered.map((r) => r.value.toLowerCase().replace(/\.$/, '')))] };
  }
  if (mx.rcode === 'NXDOMAIN') return { kind: 'none' };
  // RFC 5321 §5.1: no MX, so the domain's own address records are its implicit MX.
  const [a, aaaa] = await Promise.all([resolver.query(domain, 'A'), resolver.query(domain, 'AAAA')]);
  return a.records.some((r) => r.type === 'A') || aaaa.records.some((r) => r.type === 'AAAA') ? { kind: 'hosts', hosts: [domain] } : { kind: 'none' };
}

/** `list` in consecutive pieces of `size` (the last one shorter). */
function chunksOf<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** A local part no mailbox has: a letter and 20 random hex digits (the catch-all probe). */
const probeLocalPart = (): string => `q${randomBytes(10).toString('hex')}`;

/** What became of one real recipient. */
type Outcome =
  | { kind: 'reply'; reply: SmtpReply; mxHost: string; tls: boolean }
  | { kind: 'refused'; reply: SmtpReply; mxHost: string; tls: boolean }
  | { kind: 'failed'; cause: 'timeout' | 'connection_failed' };

export function createMailboxVerifier(o: MailboxVerifierOptions, slots: HostSlots = createHostSlots(o.maxPerHost)): MailboxVerifier {
  const definitiveTtl = o.definitiveTtlMs ?? VERDICT_TTL_MS;
  const unknownTtl = o.unknownTtlMs ?? UNKNOWN_TTL_MS;
  const session = o.session ?? runSmtpSession;
  const verdicts = new LRUCache<string, Deliverability>({ max: 50_000, ttl: definitiveTtl });
  const catchAllDomains = new LRUCache<string, boolean>({ max: 10_000, ttl: definitiveTtl });
  const resolveAddresses = addressResolver(o.resolver as DnsResolver);
  let sessions = 0;
  let hits = 0;
  let misses = 0;

  /** The address to connect to for an MX host, under the guard; null when there is none or it is refused. */
  async function addressOf(host: string): Promise<string | null> {
    const target = parseTlsTarget(host);
    if (target.kind === 'invalid') return null;
    try {
      const found = await guardedAddress({ resolve: resolveAddresses, allowPrivate: o.allowPrivate }, target);
      return 'address' in found ? found.address : null;
    } catch (err) {
      if (err instanceof RefusedTarget || err instanceof UpstreamFailure) {
        o.logger?.debug({ mxHost: host, reason: err.message }, 'MX host not contacted');
        return null;
      }
      throw err;
    }
  }

  async function verifyUncached(domain: string, users: string[]): Promise<Map<string, Deliverability>> {
    const out = new Map<string, Deliverability>();
    const route = await routeOf(o.resolver, domain);
    if (route.kind !== 'hosts') {
      const d = route.kind === 'null_mx' ? verdictWithoutSession('undeliverable', 'null_mx') : verdictWithoutSession('undeliverable', 'no_mail_server');
      for (const u of users) out.set(u, d);
      return out;
    }
    const outcomes = new Map<string, Outcome>();
    const known = catchAllDomains.get(domain);
    // The domain's catch-all state, shared by every session of this verification.
    const domainState = {
      probe: known === undefined ? ('wanted' as 'wanted' | 'asked' | 'done') : ('done' as const),
      probeReply: null as SmtpReply | null,
      probeTries: 0,
      accepted: false,
      notFound: false,
    };
    /** What a real recipient's reply tells of the domain: it takes some mail, or refuses unknown local parts. */
    const noteReal = (reply: SmtpReply): void => {
      const reason = recipientVerdict(reply).reason;
      if (reason === 'accepted') domainState.accepted = true;
      if (reason === 'mailbox_not_found') domainState.notFound = true;
    };
    /** A host's failure for a user; a timeout on any host is what the answer reports (it says more than a refusal). */
    const fail = (u: string, cause: 'timeout' | 'connection_failed'): void => {
      const had = outcomes.get(u);
      if (had === undefined || (had.kind === 'failed' && had.cause !== 'timeout')) outcomes.set(u, { kind: 'failed', cause });
    };
    const utf8 = users.some((u) => /[^\x00-\x7f]/.test(u));
    let pending = users;
    for (const host of route.hosts) {
      if (pending.length === 0) break;
      const address = await addressOf(host);
      if (address === null) {
        for (const u of pending) fail(u, 'connection_failed');
        continue;
      }
      await Promise.all(chunksOf(pending, RECIPIENTS_PER_SESSION).map((chunk) => runChunk(host, address, chunk)));
      // Those this host gave no answer for go to the next MX host.
      pending = pending.filter((u) => outcomes.get(u)?.kind === 'failed');
    }

    /**
     * Sessions with one host until every user of the chunk has an outcome from it (or it failed them). `perSession`:
     * the recipients this server takes in one transaction, once a 452 "too many recipients" said so.
     */
    async function runChunk(host: string, address: string, chunk: string[], perSession = RECIPIENTS_PER_SESSION): Promise<void> {
      const queue = [...chunk];
      let startTls = true;
      const wantProbe = () => domainState.probe === 'wanted' && domainState.accepted && !domainState.notFound && domainState.probeTries < 2;
      while (queue.length > 0 || wantProbe()) {
        const asked: Array<string | null> = []; // null: the probe
        const probeAddress = `${probeLocalPart()}@${domain}`;
        const release = await slots.acquire(host);
        let outcome: SessionOutcome;
        try {
          sessions++;
          outcome = await session({
            address,
            mxHost: host,
            port: o.port,
            heloName: o.heloName,
            mailFrom: o.mailFrom,
            timeoutMs: o.timeoutMs,
            proxy: o.proxy,
            startTls,
            utf8,
            next(replies) {
              const last = replies[replies.length - 1];
              // 452 after progress: the server takes no more recipients in this transaction (the rest: a new session).
              if (replies.length > 1 && tooManyRecipients(last)) return null;
              if (last && asked[replies.length - 1] !== null) noteReal(last);
              if (queue.length > 0 && asked.filter((a) => a !== null).length < perSession) {
                const user = queue.shift()!;
                asked.push(user);
                return `${user}@${domain}`;
              }
              // The probe comes after the real recipients, so that a server refusing a second RCPT cannot spoil them.
              // A server whose recipient limit is known and reached gets the probe in a session of its own.
              const room = perSession === RECIPIENTS_PER_SESSION || asked.length < perSession;
              if (wantProbe() && room && !asked.includes(null)) {
                domainState.probe = 'asked';
                domainState.probeTries++;
                asked.push(null);
                return probeAddress;
              }
              return null;
            },
          });
        } finally {
          release();
        }
        o.logger?.debug({ mxHost: host, outcome: outcome.kind, ...('reply' in outcome ? { code: outcome.reply.code } : {}) }, 'SMTP session');
        // Recipients asked but not answered (a cut session, a 452) go back to the front of the queue, in order.
        const unanswered = (answered: number) => {
          const back = asked.slice(answered).filter((a): a is string => a !== null);
          queue.unshift(...back);
          if (asked.slice(answered).includes(null) && domainState.probe === 'asked') domainState.probe = 'wanted';
        };
        if (outcome.kind === 'tls_failed' && startTls) {
          startTls = false; // RFC 3207 leaves the client free to go on without TLS: a new plain session
          unanswered(0);
          continue;
        }
        if (outcome.kind === 'unreachable' || outcome.kind === 'tls_failed') {
          unanswered(0);
          const cause = outcome.kind === 'unreachable' && outcome.cause === 'timeout' ? 'timeout' : 'connection_failed';
          for (const u of queue) fail(u, cause);
          return;
        }
        if (outcome.kind === 'refused') {
          unanswered(0);
          for (const u of queue) outcomes.set(u, { kind: 'refused', reply: outcome.reply, mxHost: host, tls: outcome.tls });
          if (domainState.probe === 'asked') domainState.probe = 'wanted';
          return;
        }
        const { replies, tls } = outcome;
        let answered = replies.length;
        if (answered > 1 && tooManyRecipients(replies[answered - 1])) answered--;
        for (let i = 0; i < answered; i++) {
          const user = asked[i];
          if (user === null) {
            domainState.probe = 'done';
            domainState.probeReply = replies[i];
            continue;
          }
          outcomes.set(user, { kind: 'reply', reply: replies[i], mxHost: host, tls });
          noteReal(replies[i]);
        }
        unanswered(answered);
        const real = asked.slice(0, answered).filter((a) => a !== null).length;
        if (answered < replies.length && real > 0 && queue.length > 0) {
          // The server takes `real` recipients a transaction: the rest in sessions of that size, side by side under the
          // per-host limit, rather than one after another.
          await Promise.all(chunksOf(queue.splice(0), real).map((c) => runChunk(host, address, c, real)));
          if (!wantProbe()) return;
          continue;
        }
        if (answered === 0) {
          // Cut before a single answer: this host gives none now.
          const cause = outcome.cut === 'timeout' ? 'timeout' : 'connection_failed';
          for (const u of queue) fail(u, cause);
          return;
        }
      }
    }

    const probed = catchAllOf(domainState.probeReply);
    const catchAll = probed ?? known ?? (domainState.notFound ? false : null);
    if (catchAll !== null) catchAllDomains.set(domain, catchAll);
    for (const u of users) {
      const r = outcomes.get(u);
      if (r === undefined || r.kind === 'failed') {
        out.set(u, verdictWithoutSession('unknown', r?.cause ?? 'connection_failed'));
      } else if (r.kind === 'refused') {
        out.set(u, { ...sessionRefusal(r.reply), catchAll: null, mxHost: r.mxHost, smtpCode: r.reply.code, enhancedCode: r.reply.enhancedCode, tls: r.tls });
      } else {
        out.set(u, recipientDeliverability(r.reply, catchAll, { mxHost: r.mxHost, tls: r.tls }));
      }
    }
    return out;
  }

  return {
    async verify(domain, localParts) {
      const d = domain.toLowerCase();
      const found = new Map<string, Deliverability>();
      const ask: string[] = [];
      for (const u of new Set(localParts)) {
        const cached = verdicts.get(`${u}@${d}`);
        if (cached) {
          hits++;
          found.set(u, cached);
        } else {
          misses++;
          ask.push(u);
        }
      }
      if (ask.length > 0) {
        for (const [u, v] of await verifyUncached(d, ask)) {
          found.set(u, v);
          verdicts.set(`${u}@${d}`, v, { ttl: isDefinitive(v) ? definitiveTtl : unknownTtl });
        }
      }
      return localParts.map((u) => found.get(u)!);
    },
    stats: () => ({ sessions, cacheHits: hits, cacheMisses: misses, cacheEntries: verdicts.size }),
  };
}
