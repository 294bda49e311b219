// Runs a verification plan (src/domain/smtp-plan.ts) over real sessions: a slot per server address and of the process
// (host-slots.ts), one trace span and one metrics observation per session, new sessions as the plan asks for them.
import { performance } from 'node:perf_hooks';
import { sessionLabel, type SessionLabel } from '../../domain/smtp-plan-watch.js';
import { VerificationPlan, type SessionOrder, type SessionOutcome } from '../../domain/smtp-plan.js';
import { annotate, traced } from '../tracing/spans.js';
import { SlotsUnavailableError, type SessionSlots } from './host-slots.js';
import type { SmtpSessionOptions } from './smtp-client.js';

/** What the verifier's operators see of each session (metrics; never an address). */
interface SessionEvents {
  session(label: SessionLabel, seconds: number, domain: string): void;
}

export interface SessionRunner {
  slots: SessionSlots;
  session: (o: SmtpSessionOptions) => Promise<SessionOutcome>;
  /** The parts of every session's options that do not change (SMTP_PORT, SMTP_HELO_NAME, ...). */
  base: Pick<SmtpSessionOptions, 'port' | 'heloName' | 'mailFrom' | 'timeoutMs' | 'proxy'>;
  /** Hosts whose STARTTLS failed: the runner notes them, plans read them. */
  noteTlsFailure(mxHost: string): void;
  events?: SessionEvents;
  logger?: { debug: (obj: object, msg?: string) => void };
  /** Before each session's connection and span (MailboxVerifierOptions.pace). */
  pace?: () => Promise<void> | undefined;
}

/** The span attributes of what a session learnt: reply codes (RCPT's in order, comma-separated) and TLS; never an address. */
function outcomeAttributes(outcome: SessionOutcome): Record<string, string | number | boolean> {
  switch (outcome.kind) {
    case 'answered':
      return { 'smtp.outcome': 'answered', 'smtp.rcpt.codes': outcome.replies.map((r) => r.code).join(','), 'smtp.tls': outcome.tls };
    case 'refused':
      return { 'smtp.outcome': 'refused', 'smtp.stage': outcome.stage, 'smtp.reply.code': outcome.reply.code, 'smtp.tls': outcome.tls };
    case 'unreachable':
      return { 'smtp.outcome': 'unreachable', 'error.type': outcome.cause };
    case 'tls_failed':
      return { 'smtp.outcome': 'tls_failed', 'error.type': 'tls_failed' };
  }
}

/** One session of the plan, in a slot and a span; the sessions the plan wants next (none once `signal` aborted). */
async function runOrder(r: SessionRunner, plan: VerificationPlan, order: SessionOrder, domain: string, signal: AbortSignal): Promise<SessionOrder[]> {
  const { mxHost, address } = plan.targetOf(order);
  let release: () => void;
  try {
    release = await r.slots.acquire(address, signal);
  } catch (err) {
    // Redis (the limits every process shares) unreachable until the deadline: say so rather than exceed the limit.
    if (err instanceof SlotsUnavailableError) plan.finish(order, { kind: 'unreachable', cause: 'limits' });
    return []; // the deadline or the client came first: nothing was asked of this address
  }
  await r.pace?.();
  const started = performance.now();
  let outcome: SessionOutcome;
  try {
    const attributes = { 'server.address': mxHost, 'network.peer.address': address, 'server.port': r.base.port, 'smtp.starttls': order.startTls };
    outcome = await traced('SMTP session', attributes, async () => {
      const out = await r.session({
        ...r.base,
        address,
        mxHost,
        startTls: order.startTls,
        utf8: plan.wantsSmtpUtf8(order),
        signal,
        next: (replies, server) => plan.next(order, replies, server),
      });
      annotate(outcomeAttributes(out));
      return out;
    });
  } finally {
    release();
  }
  const label = sessionLabel(outcome, signal.aborted);
  r.events?.session(label, (performance.now() - started) / 1000, domain);
  r.logger?.debug({ mxHost, address, outcome: label, ...('reply' in outcome ? { code: outcome.reply.code } : {}) }, 'SMTP session');
  if (VerificationPlan.tlsFailed(order, outcome)) r.noteTlsFailure(mxHost);
  const more = plan.finish(order, outcome);
  return signal.aborted ? [] : more;
}

/** Every session the plan asks for, side by side, until none is left; resolves when the last one has ended. */
export async function runPlan(r: SessionRunner, plan: VerificationPlan, domain: string, signal: AbortSignal): Promise<void> {
  const running = new Set<Promise<void>>();
  const launch = (order: SessionOrder): void => {
    const p: Promise<void> = runOrder(r, plan, order, domain, signal).then((more) => {
      running.delete(p);
      more.forEach(launch);
    });
    running.add(p);
  };
  plan.start().forEach(launch);
  while (running.size > 0) await Promise.race(running);
}
