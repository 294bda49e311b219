// Mailbox verification planning (RFC 5321 §5.1 MX order and addresses, §4.5.3.1.10 recipient limits, RFC 3207, RFC 6531):
// which sessions to open, whom to ask in each and the verdicts they add up to, without a socket (the transport,
// src/adapters/smtp/smtp-client.ts, runs what this plans; docs/adr/0029-smtp-verifier-design.md).
import {
  recipientDeliverability,
  recipientVerdict,
  sessionRefusal,
  tooManyRecipients,
  verdictWithoutSession,
  type Deliverability,
  type SmtpReply,
} from './smtp-reply.js';

/** What one session with one server address came to (the transport's report). */
export type SessionOutcome =
  /**
   * No verdict from this address: it refused or reset the connection, closed it, did not answer in time, or broke RFC
   * 5321 §4.2 (`protocol`); or the SOCKS proxy (SMTP_PROXY) is down or refused to connect (`proxy`, its error in `detail`);
   * or the per-address limits shared through Redis could not be reached, so the address was not dialled (`limits`).
   */
  | { kind: 'unreachable'; cause: EndCause | 'refused' | 'proxy' | 'limits'; detail?: string }
  /** The server refused the session before any recipient: at the greeting, EHLO/HELO or MAIL FROM. */
  | { kind: 'refused'; stage: 'greeting' | 'helo' | 'mail'; reply: SmtpReply; tls: boolean }
  /** The STARTTLS handshake failed: the caller may try again without it. */
  | { kind: 'tls_failed' }
  /** Recipients answered, in the order asked; `cut` when the session ended before the plan said it was done. */
  | { kind: 'answered'; replies: SmtpReply[]; tls: boolean; cut: EndCause | null };

/** Why a session ended before its end: the peer closed it, the time ran out, or the peer's replies broke RFC 5321 §4.2. */
export type EndCause = 'closed' | 'timeout' | 'protocol';

/** One address of one MX host, in the order tried: every address of the first MX, then of the next. */
export interface Target {
  mxHost: string;
  address: string;
  /** Rank of the MX host (0: most preferred); targets of one host share it. */
  mx: number;
}

/** A session the plan wants opened. The transport asks `plan.next(order, ...)` for each recipient. */
export interface SessionOrder {
  target: number;
  startTls: boolean;
  /** Real recipients of this session still to ask, in order. */
  queue: string[];
  /** The recipients this server takes in one transaction, once a 452 said so. */
  perSession: number;
  /** Asked so far, in order; null is the catch-all probe. */
  asked: Array<string | null>;
  /** Non-ASCII local parts this server could not be asked (no SMTPUTF8). */
  unsupported: string[];
}

/** What became of one real recipient, the best answer kept (a reply beats a deferral beats a failure). */
type Outcome =
  | { kind: 'reply'; reply: SmtpReply; mxHost: string; tls: boolean }
  | { kind: 'refused'; reply: SmtpReply; mxHost: string; tls: boolean }
  | { kind: 'failed'; cause: Failure };

/** The reason of an `unknown` verdict without any reply to the recipient. */
type Failure = 'timeout' | 'connection_failed' | 'protocol_error' | 'proxy_failed' | 'limits_unavailable' | 'smtputf8_unsupported';

/** What a session's end or failed connection means for the recipients it did not answer. */
const FAILURES: Partial<Record<string, Failure>> = { timeout: 'timeout', protocol: 'protocol_error', proxy: 'proxy_failed', limits: 'limits_unavailable' };
const failureOf = (cause: EndCause | 'refused' | 'proxy' | 'limits' | null): Failure => FAILURES[cause ?? ''] ?? 'connection_failed';

/** A failure that says more of why (a server breaking the protocol, our proxy failing) outranks a bare one. */
const RANK = { reply: 5, refused: 4, smtputf8_unsupported: 3, protocol_error: 2.5, proxy_failed: 2, limits_unavailable: 1.5, timeout: 1, connection_failed: 0 } as const;
const rankOf = (o: Outcome): number => (o.kind === 'failed' ? RANK[o.cause] : o.kind === 'refused' && o.reply.code >= 500 ? 5 : RANK[o.kind]);

/** Real recipients asked in one session at most (RFC 5321 §4.5.3.1.8 has servers take at least 100). */
const RECIPIENTS_PER_SESSION = 20;

export interface PlanOptions {
  domain: string;
  users: readonly string[];
  targets: readonly Target[];
  /** Hosts whose STARTTLS failed lately: asked in plain sessions straight away. */
  plainHosts: { has(host: string): boolean };
  /** The domain's catch-all state when known (cached), else null: the plan may probe. */
  catchAllKnown: boolean | null;
  /** Whether this plan may send the domain's probe (false: another verification of the domain is sending it). */
  claimProbe: () => boolean;
  /** A local part no mailbox has (the probe). */
  probeLocalPart: () => string;
}

/** `list` in consecutive pieces of `size` (the last one shorter). */
function chunksOf<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** An ASCII local part goes to any server; another needs SMTPUTF8 (RFC 6531 §3.4). */
const needsSmtpUtf8 = (user: string): boolean => /[^\x00-\x7f]/.test(user);

/** The probe's progress for this plan. */
type ProbeState = 'wanted' | 'asked' | 'done' | 'elsewhere';

/**
 * One verification of some local parts at one domain, as a state machine: `start()` gives the first sessions,
 * `next()` the recipient to ask within a session, `finish()` the sessions an outcome calls for, `verdicts()` the answer.
 */
export class VerificationPlan {
  private readonly best = new Map<string, Outcome>();
  private probe: ProbeState;
  private probeTries = 0;
  /** The probe is this plan's to send (asked once: `claimProbe` may register the plan as the domain's prober). */
  private claimed = false;
  private probeReply: SmtpReply | null = null;
  private accepted = false;
  private notFound = false;

  constructor(private readonly o: PlanOptions) {
    this.probe = o.catchAllKnown === null ? 'wanted' : 'done';
  }

  /** The first sessions: every user at the first target, in chunks; none when there is no target. */
  start(): SessionOrder[] {
    if (this.o.targets.length === 0) {
      for (const u of this.o.users) this.keep(u, { kind: 'failed', cause: 'connection_failed' });
      return [];
    }
    return chunksOf(this.o.users, RECIPIENTS_PER_SESSION).map((chunk) => this.order(0, chunk));
  }

  private order(target: number, queue: string[], perSession = RECIPIENTS_PER_SESSION, startTls?: boolean): SessionOrder {
    const plain = this.o.plainHosts.has(this.o.targets[target].mxHost);
    return { target, startTls: startTls ?? !plain, queue, perSession, asked: [], unsupported: [] };
  }

  /** The target a session is for. */
  targetOf(order: SessionOrder): Target {
    return this.o.targets[order.target];
  }

  /** Whether MAIL FROM should carry SMTPUTF8 (a recipient of the session needs it). */
  wantsSmtpUtf8(order: SessionOrder): boolean {
    return order.queue.some(needsSmtpUtf8);
  }

  private wantProbe(): boolean {
    if (this.probe !== 'wanted' || !this.accepted || this.notFound || this.probeTries >= 2) return false;
    if (this.claimed) return true;
    this.claimed = this.o.claimProbe();
    if (!this.claimed) this.probe = 'elsewhere';
    return this.claimed;
  }

  /** What a real recipient's reply tells of the domain: it takes some mail, or refuses unknown local parts. */
  private note(reply: SmtpReply): void {
    const reason = recipientVerdict(reply).reason;
    if (reason === 'accepted') this.accepted = true;
    if (reason === 'mailbox_not_found') this.notFound = true;
  }

  /**
   * The next address to ask in a session given its replies so far, or null to end the transaction. The probe comes
   * after the real recipients, so that a server refusing a second RCPT cannot spoil them; a server whose recipient
   * limit is known and reached gets the probe in a session of its own.
   */
  next(order: SessionOrder, replies: readonly SmtpReply[], server: { smtpUtf8: boolean }): string | null {
    const last = replies[replies.length - 1];
    if (replies.length > 1 && tooManyRecipients(last)) return null;
    if (last && order.asked[replies.length - 1] !== null) this.note(last);
    while (order.queue.length > 0 && !server.smtpUtf8 && needsSmtpUtf8(order.queue[0])) order.unsupported.push(order.queue.shift()!);
    const real = order.asked.filter((a) => a !== null).length;
    if (order.queue.length > 0 && real < order.perSession) {
      const user = order.queue.shift()!;
      order.asked.push(user);
      return `${user}@${this.o.domain}`;
    }
    if (order.queue.length > 0) return null;
    const room = order.perSession === RECIPIENTS_PER_SESSION || order.asked.length < order.perSession;
    if (room && !order.asked.includes(null) && this.wantProbe()) {
      this.probe = 'asked';
      this.probeTries++;
      order.asked.push(null);
      return `${this.o.probeLocalPart()}@${this.o.domain}`;
    }
    return null;
  }

  private keep(user: string, outcome: Outcome): void {
    const had = this.best.get(user);
    if (had === undefined || rankOf(outcome) >= rankOf(had)) this.best.set(user, outcome);
  }

  /** Recipients asked but not answered go back to the front of the queue, in order; an unanswered probe is wanted again. */
  private requeue(order: SessionOrder, answered: number): void {
    const back = order.asked.slice(answered);
    order.queue.unshift(...back.filter((a): a is string => a !== null));
    if (back.includes(null) && this.probe === 'asked') this.probe = 'wanted';
    order.asked = order.asked.slice(0, answered);
  }

  /** The first target after `target` that belongs to another MX host, or -1. */
  private nextMx(target: number): number {
    const mx = this.o.targets[target].mx;
    return this.o.targets.findIndex((t, i) => i > target && t.mx !== mx);
  }

  /** `users` failed at `target` for `cause`: kept as their answer unless a better one comes, and tried at `then`. */
  private moveOn(users: string[], outcome: Outcome, then: number): SessionOrder[] {
    for (const u of users) this.keep(u, outcome);
    if (users.length === 0 || then < 0 || then >= this.o.targets.length) return [];
    return chunksOf(users, RECIPIENTS_PER_SESSION).map((chunk) => this.order(then, chunk));
  }

  /** The sessions `outcome` of `order` calls for: a plain retry, the next address or MX host, the rest of a queue. */
  finish(order: SessionOrder, outcome: SessionOutcome): SessionOrder[] {
    const { mxHost } = this.targetOf(order);
    const later = this.moveOn(order.unsupported.splice(0), { kind: 'failed', cause: 'smtputf8_unsupported' }, this.nextMx(order.target));
    if (outcome.kind !== 'answered') this.requeue(order, 0);
    if (outcome.kind === 'tls_failed' && order.startTls) {
      // RFC 3207 leaves the client free to go on without TLS: a new plain session.
      return [...later, this.order(order.target, order.queue, order.perSession, false)];
    }
    if (outcome.kind === 'unreachable' || outcome.kind === 'tls_failed') {
      const cause = failureOf(outcome.kind === 'unreachable' ? outcome.cause : null);
      return [...later, ...this.moveOn(order.queue, { kind: 'failed', cause }, order.target + 1)];
    }
    if (outcome.kind === 'refused') {
      const refused: Outcome = { kind: 'refused', reply: outcome.reply, mxHost, tls: outcome.tls };
      // A 4xx (421 closing, 450 busy) says "not now" of this MX host: the next MX may answer better (RFC 5321 §4.5.4.1).
      const then = outcome.reply.code < 500 ? this.nextMx(order.target) : -1;
      return [...later, ...this.moveOn(order.queue, refused, then)];
    }
    return [...later, ...this.answered(order, outcome)];
  }

  private answered(order: SessionOrder, outcome: Extract<SessionOutcome, { kind: 'answered' }>): SessionOrder[] {
    const { mxHost } = this.targetOf(order);
    const { replies, tls } = outcome;
    let answered = replies.length;
    const last = replies[answered - 1];
    // 421 to a RCPT: the server is closing the channel (RFC 5321 §3.8), no verdict on that recipient; it and the rest
    // go to the next MX, as after a 421 at the greeting, rather than back to a server shedding load.
    const closing = last?.code === 421;
    if (closing || (answered > 1 && tooManyRecipients(last))) answered--;
    for (let i = 0; i < answered; i++) {
      const user = order.asked[i];
      if (user === null) {
        this.probe = 'done';
        this.probeReply = replies[i];
      } else {
        this.keep(user, { kind: 'reply', reply: replies[i], mxHost, tls });
        this.note(replies[i]);
      }
    }
    this.requeue(order, answered);
    if (closing) return this.moveOn(order.queue, { kind: 'refused', reply: last, mxHost, tls }, this.nextMx(order.target));
    const real = order.asked.filter((a) => a !== null).length;
    if (answered === 0 && order.queue.length > 0) {
      // Cut before a single answer: this address gives none now.
      return this.moveOn(order.queue, { kind: 'failed', cause: failureOf(outcome.cut) }, order.target + 1);
    }
    if (answered < replies.length && real > 0 && order.queue.length > 0) {
      // The server takes `real` recipients a transaction: the rest in sessions of that size, side by side under the
      // per-address limit, rather than one after another.
      return chunksOf(order.queue, real).map((chunk) => this.order(order.target, chunk, real, order.startTls));
    }
    if (order.queue.length > 0 || (answered > 0 && this.wantProbe())) return [this.order(order.target, order.queue, order.perSession, order.startTls)];
    return [];
  }

  /** Whether the STARTTLS of this session's host failed (the caller remembers the host). */
  static tlsFailed(order: SessionOrder, outcome: SessionOutcome): boolean {
    return outcome.kind === 'tls_failed' && order.startTls;
  }

  /** The domain's catch-all state as this plan learnt it: the probe's answer, or a refused address; null: not known. */
  catchAll(): boolean | null {
    if (this.probeReply !== null) {
      const reason = recipientVerdict(this.probeReply).reason;
      if (reason === 'accepted') return true;
      if (reason === 'mailbox_not_found') return false;
    }
    return this.o.catchAllKnown ?? (this.notFound ? false : null);
  }

  /** Whether the verdicts wait for another verification's probe of the domain. */
  awaitsProbe(): boolean {
    return this.probe === 'elsewhere' && this.accepted && !this.notFound;
  }

  /** The verdict of each user. `expired`: the deadline came first, so a user without an answer timed out. */
  verdicts(catchAll: boolean | null, expired = false): Map<string, Deliverability> {
    const out = new Map<string, Deliverability>();
    for (const u of this.o.users) {
      const r = this.best.get(u);
      if (r === undefined || r.kind === 'failed') {
        const cause = r === undefined || (expired && r.cause === 'connection_failed') ? (expired ? 'timeout' : 'connection_failed') : r.cause;
        out.set(u, verdictWithoutSession('unknown', cause));
      } else if (r.kind === 'refused') {
        const where = { catchAll: null, mxHost: r.mxHost, smtpCode: r.reply.code, enhancedCode: r.reply.enhancedCode, tls: r.tls };
        out.set(u, { ...sessionRefusal(r.reply), ...where });
      } else out.set(u, recipientDeliverability(r.reply, catchAll, { mxHost: r.mxHost, tls: r.tls }));
    }
    return out;
  }
}
