// Mailbox verification over SMTP (RFC 5321 §5.1, RFC 7505, RFC 3207, RFC 6531; docs/adr/0029-smtp-verifier-design.md):
// a verdict cache, one flight per address however many requests ask, one deadline per verification, a domain's
// catch-all probe sent once, the plan (src/domain/smtp-plan.ts) run over real sessions. Never sends a message.
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { createListingWatch, type SessionLabel } from '../../domain/smtp-plan-watch.js';
import { VerificationPlan, type SessionOutcome, type Target } from '../../domain/smtp-plan.js';
import { isDefinitive, verdictWithoutSession, type Deliverability } from '../../domain/smtp-reply.js';
import type { DnsResolver } from '../dns/resolver.js';
import { createSessionSlots, type SessionSlots } from './host-slots.js';
import { runSmtpSession, type SmtpSessionOptions } from './smtp-client.js';
import { routeOf, targetsOf, untilAborted, type Route } from './smtp-route.js';
import { runPlan, type SessionRunner } from './smtp-sessions.js';
import { createLocalVerdictCache, type VerdictCache } from './verdict-cache.js';

export interface MailboxVerifierOptions {
  resolver: Pick<DnsResolver, 'query'>;
  /** ALLOW_PRIVATE_TARGETS: MX hosts at private addresses are contacted (tests only). */
  allowPrivate: boolean;
  port: number;
  heloName: string;
  mailFrom: string;
  /** SMTP_TIMEOUT_MS: the limit of one session with one server address. */
  timeoutMs: number;
  /** SMTP_DEADLINE_MS: the limit of a whole verification (every host and address, slot waits, the plain retry). */
  deadlineMs?: number;
  /** SMTP_MAX_PER_HOST: sessions to one server address at once. */
  maxPerHost: number;
  /** SMTP_MAX_SESSIONS: sessions of the process at once. */
  maxSessions?: number;
  proxy: { host: string; port: number } | null;
  logger?: { debug: (obj: object, msg?: string) => void; warn: (obj: object, msg?: string) => void };
  /** Default VERDICT_TTL_MS. */
  definitiveTtlMs?: number;
  /** Default UNKNOWN_TTL_MS. */
  unknownTtlMs?: number;
  /** False: an `unknown` verdict in the cache is not taken (the jobs' verifier: a retry asks the server again). */
  reuseUnknown?: boolean;
  /** Replaces runSmtpSession (unit tests of the orchestration). */
  session?: (o: SmtpSessionOptions) => Promise<SessionOutcome>;
  /** Metrics of verdicts and sessions (smtp-metrics.ts). */
  events?: VerifierEvents;
  /** The caches' clock (tests of their lifetimes); default performance. */
  clock?: { now(): number };
  /**
   * A yield point between a verification's steps (src/operations/pacing.ts): a cached DNS answer resumes every
   * verification waiting on it in one drain of microtasks, which the caller's own pacing cannot split. Default none.
   */
  pace?: () => Promise<void> | undefined;
}

export interface VerifierEvents {
  session(label: SessionLabel, seconds: number): void;
  verdict(d: Deliverability): void;
}

export interface MailboxVerifier {
  /**
   * The verdict for each local part at `domain`, in the order given (duplicates answered alike). `signal`: the client
   * went away; sessions and waits no other request shares end (QUIT sent) and the answer is not cached.
   */
  verify(domain: string, localParts: readonly string[], signal?: AbortSignal): Promise<Deliverability[]>;
  stats(): { sessions: number; cacheHits: number; cacheMisses: number; cacheEntries: number; inFlight: number; listed: boolean; blockedShare: number };
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
 * short enough that a retry after it gets a real answer. A `blocked` verdict is `unknown`: a listed verifier IP
 * delisted meanwhile is asked again after 10 minutes, not 6 hours.
 */
const UNKNOWN_TTL_MS = 10 * 60_000;
/** How long a host whose STARTTLS failed is asked in plain sessions straight away (no doomed handshake first). */
const PLAIN_HOST_TTL_MS = 3600_000;
const DEFAULT_DEADLINE_MS = 30_000;
const DEFAULT_MAX_SESSIONS = 50;

/** A local part no mailbox has: a letter and 20 random hex digits (the catch-all probe). */
const probeLocalPart = (): string => `q${randomBytes(10).toString('hex')}`;

/** One verification of some local parts at a domain in progress: what it will answer and how many requests wait for it. */
interface Flight {
  done: Promise<Map<string, Deliverability>>;
  waiting: number;
  /** Aborted when every request waiting for the flight has gone. */
  cancel: AbortController;
}

/** The verifier's shared state: caches, flights in progress, the domains' probes in progress, the listing watch. */
interface State {
  o: MailboxVerifierOptions;
  runner: SessionRunner;
  verdicts: VerdictCache;
  catchAll: LRUCache<string, boolean>;
  plainHosts: LRUCache<string, true>;
  flights: Map<string, Flight>;
  probes: Map<string, Promise<boolean | null>>;
  counts: { sessions: number; hits: number; misses: number };
}

/** Whether a plan at `domain` may send the catch-all probe: not when the state is known or another plan sends it. */
function claimProbe(s: State, domain: string, settle: { fn: ((v: boolean | null) => void) | null }): boolean {
  if (s.probes.has(domain) || s.catchAll.has(domain)) return false;
  s.probes.set(domain, new Promise((resolve) => (settle.fn = resolve)));
  return true;
}

/** The catch-all state another verification's probe finds, waited for until `signal` aborts (then null). */
function probeElsewhere(s: State, domain: string, signal: AbortSignal): Promise<boolean | null> {
  const pending = s.probes.get(domain);
  if (pending === undefined || signal.aborted) return Promise.resolve(s.catchAll.get(domain) ?? null);
  return new Promise((resolve) => {
    const give = (v: boolean | null): void => {
      signal.removeEventListener('abort', gone);
      resolve(v);
    };
    const gone = (): void => give(null);
    signal.addEventListener('abort', gone, { once: true });
    void pending.then(give);
  });
}

/** The route and its targets (MX, A, AAAA lookups) within the verification's signal: null once it aborted. */
async function lookUp(s: State, domain: string, signal: AbortSignal): Promise<{ route: Route; targets: Target[] } | null> {
  const resolver = untilAborted(s.o.resolver, signal);
  try {
    const route = await routeOf(resolver, domain);
    return { route, targets: route.kind === 'hosts' ? await targetsOf({ ...s.o, resolver }, route.hosts) : [] };
  } catch (err) {
    if (signal.aborted) return null;
    throw err;
  }
}

/** The verdicts for `users` at `domain` from DNS and sessions, within the deadline or until `cancel` aborts. */
async function verifyUncached(s: State, domain: string, users: string[], cancel: AbortSignal): Promise<Map<string, Deliverability>> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), s.o.deadlineMs ?? DEFAULT_DEADLINE_MS);
  const signal = AbortSignal.any([cancel, deadline.signal]);
  const settle: { fn: ((v: boolean | null) => void) | null } = { fn: null };
  try {
    const found = await lookUp(s, domain, signal);
    await s.o.pace?.();
    if (found === null) return new Map(users.map((u) => [u, verdictWithoutSession('unknown', 'timeout')]));
    const { route, targets } = found;
    if (route.kind !== 'hosts') {
      const d = verdictWithoutSession('undeliverable', route.kind === 'null_mx' ? 'null_mx' : 'no_mail_server');
      return new Map(users.map((u) => [u, d]));
    }
    const plan = new VerificationPlan({
      domain,
      users,
      targets,
      plainHosts: s.plainHosts,
      catchAllKnown: s.catchAll.get(domain) ?? null,
      claimProbe: () => claimProbe(s, domain, settle),
      probeLocalPart,
    });
    await runPlan(s.runner, plan, domain, signal);
    let catchAll = plan.catchAll();
    if (settle.fn === null && plan.awaitsProbe()) catchAll = (await probeElsewhere(s, domain, signal)) ?? catchAll;
    if (catchAll !== null) s.catchAll.set(domain, catchAll);
    return plan.verdicts(catchAll, deadline.signal.aborted);
  } finally {
    clearTimeout(timer);
    if (settle.fn !== null) {
      s.probes.delete(domain);
      settle.fn(s.catchAll.get(domain) ?? null);
    }
  }
}

/** A new flight for `users` at `domain`, registered under each address until it lands (then its verdicts cached). */
function startFlight(s: State, domain: string, users: string[]): Flight {
  const cancel = new AbortController();
  const flight: Flight = { done: null as never, waiting: 0, cancel };
  const land = (): void => {
    for (const u of users) if (s.flights.get(`${u}@${domain}`) === flight) s.flights.delete(`${u}@${domain}`);
  };
  flight.done = verifyUncached(s, domain, users, cancel.signal).then(
    (found) => {
      land();
      // A flight every client left ended early: its timeouts say nothing of the servers.
      if (!cancel.signal.aborted) s.verdicts.set(domain, found, (v) => (isDefinitive(v) ? s.o.definitiveTtlMs ?? VERDICT_TTL_MS : s.o.unknownTtlMs ?? UNKNOWN_TTL_MS));
      return found;
    },
    (err: unknown) => {
      land();
      throw err;
    },
  );
  for (const u of users) s.flights.set(`${u}@${domain}`, flight);
  return flight;
}

/** Wait for a flight's verdicts as one of its requests; when `signal` aborts and no other request waits, cancel it. */
async function join(flight: Flight, signal: AbortSignal | undefined): Promise<Map<string, Deliverability>> {
  flight.waiting++;
  const gone = (): void => {
    if (--flight.waiting === 0) flight.cancel.abort();
  };
  signal?.addEventListener('abort', gone, { once: true });
  if (signal?.aborted) gone();
  try {
    return await flight.done;
  } finally {
    signal?.removeEventListener('abort', gone);
  }
}

async function verify(s: State, domain: string, localParts: readonly string[], signal?: AbortSignal): Promise<Deliverability[]> {
  const d = domain.toLowerCase();
  const found = new Map<string, Deliverability>();
  const flights = new Set<Flight>();
  const ask: string[] = [];
  const users = [...new Set(localParts)];
  const kept = await s.verdicts.get(d, users);
  await s.o.pace?.();
  for (const u of users) {
    const cached = kept.get(u);
    if (cached && (s.o.reuseUnknown !== false || isDefinitive(cached))) {
      s.counts.hits++;
      found.set(u, cached);
      continue;
    }
    s.counts.misses++;
    // A flight every client left is ending: a new request asks again rather than take its cut-short answer.
    const flying = s.flights.get(`${u}@${d}`);
    if (flying && !flying.cancel.signal.aborted) flights.add(flying);
    else ask.push(u);
  }
  if (ask.length > 0) flights.add(startFlight(s, d, ask));
  for (const answer of await Promise.all([...flights].map((f) => join(f, signal)))) {
    for (const [u, v] of answer) if (!found.has(u)) found.set(u, v);
  }
  const out = localParts.map((u) => found.get(u)!);
  for (const v of out) s.o.events?.verdict(v);
  return out;
}

/**
 * `slots` and `verdicts` are the process's (one of each shared by every verifier in it: per-address limits hold for
 * them all) and, with Redis, every process's: docs/adr/0033-shared-smtp-limits.md.
 */
export function createMailboxVerifier(
  o: MailboxVerifierOptions,
  slots: SessionSlots = createSessionSlots(o.maxPerHost, o.maxSessions ?? DEFAULT_MAX_SESSIONS),
  verdicts: VerdictCache = createLocalVerdictCache({ clock: o.clock }),
): MailboxVerifier {
  const watch = createListingWatch();
  const definitiveTtl = o.definitiveTtlMs ?? VERDICT_TTL_MS;
  const s: State = {
    o,
    runner: null as never,
    verdicts,
    catchAll: new LRUCache({ max: 10_000, ttl: definitiveTtl, perf: o.clock }),
    plainHosts: new LRUCache({ max: 10_000, ttl: PLAIN_HOST_TTL_MS, perf: o.clock }),
    flights: new Map(),
    probes: new Map(),
    counts: { sessions: 0, hits: 0, misses: 0 },
  };
  s.runner = {
    slots,
    session: o.session ?? runSmtpSession,
    base: { port: o.port, heloName: o.heloName, mailFrom: o.mailFrom, timeoutMs: o.timeoutMs, proxy: o.proxy },
    noteTlsFailure: (host) => s.plainHosts.set(host, true),
    logger: o.logger,
    pace: o.pace,
    events: {
      session(label, seconds, domain) {
        s.counts.sessions++;
        o.events?.session(label, seconds);
        const change = watch.record(domain, label);
        // One line when the state changes, never per session: the address and the domains stay out of it.
        if (change === 'listed') o.logger?.warn({ blockedShare: watch.blockedShare() }, 'most recent SMTP sessions at several domains were refused by policy: the verifier\'s IP address is probably listed (verdicts stay unknown/blocked)');
      },
    },
  };
  return {
    verify: (domain, localParts, signal) => verify(s, domain, localParts, signal),
    stats: () => ({
      sessions: s.counts.sessions,
      cacheHits: s.counts.hits,
      cacheMisses: s.counts.misses,
      cacheEntries: s.verdicts.size(),
      inFlight: slots.inFlight(),
      listed: watch.listed(),
      blockedShare: watch.blockedShare(),
    }),
  };
}
