// The verification planner (RFC 5321 §5.1 MX order and addresses, §4.5.3.1.10, RFC 3207, RFC 6531) run against
// scripted servers: each address of the script answers as a real one would, no socket anywhere.
import { describe, expect, it } from 'vitest';
import { VerificationPlan, type SessionOrder, type SessionOutcome, type Target } from '../../src/domain/smtp-plan.js';
import type { SmtpReply } from '../../src/domain/smtp-reply.js';

/** How one scripted server address behaves. */
interface Script {
  /** The whole session ends like this before any recipient (a refusal, no connection, a broken STARTTLS). */
  session?: SessionOutcome;
  /** STARTTLS fails when tried (a plain session then works). */
  brokenTls?: boolean;
  /** Offers SMTPUTF8. */
  smtpUtf8?: boolean;
  /** The reply to RCPT TO of `address`; index counts the RCPTs of the session. */
  rcpt?: (address: string, index: number) => SmtpReply;
}

const ok: SmtpReply = { code: 250, enhancedCode: null };
const unknownUser: SmtpReply = { code: 550, enhancedCode: '5.1.1' };
const users = (...names: string[]) => (a: string) => (names.includes(a.split('@')[0]) ? ok : unknownUser);

/** Runs a plan to the end against `scripts` (keyed by address); returns the verdicts and each session's dialogue. */
function run(targets: Target[], scripts: Record<string, Script>, who: string[], opts: { catchAllKnown?: boolean | null; claim?: () => boolean; plain?: string[] } = {}) {
  let n = 0;
  const plan = new VerificationPlan({
    domain: 'example.test',
    users: who,
    targets,
    plainHosts: new Set(opts.plain ?? []),
    catchAllKnown: opts.catchAllKnown ?? null,
    claimProbe: opts.claim ?? (() => true),
    probeLocalPart: () => `probe${n++}`,
  });
  const log: Array<{ address: string; tls: boolean; rcpts: string[] }> = [];
  const sessionOf = (order: SessionOrder): SessionOutcome => {
    const { address } = plan.targetOf(order);
    const s = scripts[address] ?? {};
    const rec = { address, tls: order.startTls, rcpts: [] as string[] };
    log.push(rec);
    if (s.session) return s.session;
    if (order.startTls && s.brokenTls) return { kind: 'tls_failed' };
    const replies: SmtpReply[] = [];
    for (let rcpt = plan.next(order, replies, { smtpUtf8: !!s.smtpUtf8 }); rcpt !== null; rcpt = plan.next(order, replies, { smtpUtf8: !!s.smtpUtf8 })) {
      rec.rcpts.push(rcpt);
      replies.push((s.rcpt ?? (() => ok))(rcpt, replies.length));
      // 421: the server closes the channel (RFC 5321 §3.8), as the transport reports it.
      if (replies[replies.length - 1].code === 421) return { kind: 'answered', replies, tls: false, cut: 'closed' };
    }
    return { kind: 'answered', replies, tls: order.startTls && !s.brokenTls, cut: null };
  };
  const queue = plan.start();
  const tlsFailedHosts: string[] = [];
  for (let order = queue.shift(); order; order = queue.shift()) {
    const outcome = sessionOf(order);
    if (VerificationPlan.tlsFailed(order, outcome)) tlsFailedHosts.push(plan.targetOf(order).mxHost);
    queue.push(...plan.finish(order, outcome));
    if (log.length > 100) throw new Error('the plan does not end');
  }
  return { verdicts: plan.verdicts(plan.catchAll()), log, plan, tlsFailedHosts };
}

const T = (mxHost: string, address: string, mx: number): Target => ({ mxHost, address, mx });
const greeting = (code: number, enhancedCode: string | null = null): SessionOutcome => ({ kind: 'refused', stage: 'greeting', reply: { code, enhancedCode }, tls: false });

describe('MX hosts and their addresses', () => {
  it('every address of the first MX host, in order, before the next MX', () => {
    const targets = [T('mx1', '10.0.0.1', 0), T('mx1', '10.0.0.2', 0), T('mx2', '10.0.0.3', 1)];
    const { verdicts, log } = run(targets, { '10.0.0.1': { session: { kind: 'unreachable', cause: 'refused' } }, '10.0.0.2': { rcpt: users('alice') } }, ['alice']);
    expect(log.map((l) => l.address)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(log[1].rcpts).toEqual(['alice@example.test', 'probe0@example.test']);
    expect(verdicts.get('alice')).toMatchObject({ status: 'deliverable', mxHost: 'mx1', catchAll: false });
  });

  it('a 4xx at the greeting skips the rest of that MX host for the next MX', () => {
    const targets = [T('mx1', '10.0.0.1', 0), T('mx1', '10.0.0.2', 0), T('mx2', '10.0.0.3', 1)];
    const { verdicts, log } = run(targets, { '10.0.0.1': { session: greeting(421, '4.3.2') }, '10.0.0.3': { rcpt: users('bob') } }, ['bob']);
    expect(log.map((l) => l.address)).toEqual(['10.0.0.1', '10.0.0.3']);
    expect(verdicts.get('bob')).toMatchObject({ status: 'deliverable', mxHost: 'mx2' });
  });

  it('4xx everywhere: unknown/greylisted from the refusal, not a failure of the later hosts', () => {
    const targets = [T('mx1', '10.0.0.1', 0), T('mx2', '10.0.0.2', 1)];
    const { verdicts } = run(targets, { '10.0.0.1': { session: greeting(421) }, '10.0.0.2': { session: { kind: 'unreachable', cause: 'timeout' } } }, ['bob']);
    expect(verdicts.get('bob')).toMatchObject({ status: 'unknown', reason: 'greylisted', smtpCode: 421, mxHost: 'mx1' });
  });

  it('421 to a RCPT: no verdict on it, it and the rest go to the next MX (none left: unknown/greylisted)', () => {
    const targets = [T('mx1', '10.0.0.1', 0), T('mx2', '10.0.0.2', 1)];
    const closing = (_address: string, i: number): SmtpReply => (i === 1 ? { code: 421, enhancedCode: '4.3.2' } : ok);
    const scripts = { '10.0.0.1': { rcpt: closing } };
    const { verdicts, log } = run(targets, { ...scripts, '10.0.0.2': { rcpt: users('a', 'b', 'c') } }, ['a', 'b', 'c']);
    expect(log.map((l) => [l.address, l.rcpts.length])).toEqual([['10.0.0.1', 2], ['10.0.0.2', 3]]);
    expect([...verdicts.values()].map((v) => [v.status, v.mxHost])).toEqual([['deliverable', 'mx1'], ['deliverable', 'mx2'], ['deliverable', 'mx2']]);
    const alone = run([T('mx1', '10.0.0.1', 0)], scripts, ['a', 'b']).verdicts;
    expect(alone.get('b')).toMatchObject({ status: 'unknown', reason: 'greylisted', smtpCode: 421 });
  });

  it('a 5xx at MAIL ends there: unknown/blocked, no next MX', () => {
    const targets = [T('mx1', '10.0.0.1', 0), T('mx2', '10.0.0.2', 1)];
    const refused: SessionOutcome = { kind: 'refused', stage: 'mail', reply: { code: 550, enhancedCode: '5.7.1' }, tls: false };
    const { verdicts, log } = run(targets, { '10.0.0.1': { session: refused } }, ['bob']);
    expect(log).toHaveLength(1);
    expect(verdicts.get('bob')).toMatchObject({ status: 'unknown', reason: 'blocked', smtpCode: 550 });
  });

  it('a timeout beats a refused connection as the reason; no target at all: connection_failed', () => {
    const targets = [T('mx1', '10.0.0.1', 0), T('mx2', '10.0.0.2', 1)];
    const scripts = { '10.0.0.1': { session: { kind: 'unreachable', cause: 'timeout' } as SessionOutcome }, '10.0.0.2': { session: { kind: 'unreachable', cause: 'refused' } as SessionOutcome } };
    expect(run(targets, scripts, ['a']).verdicts.get('a')).toMatchObject({ status: 'unknown', reason: 'timeout' });
    expect(run([], {}, ['a']).verdicts.get('a')).toMatchObject({ status: 'unknown', reason: 'connection_failed' });
  });

  it.each<[string, SessionOutcome, string]>([
    ['a session cut by replies that break RFC 5321 §4.2', { kind: 'answered', replies: [], tls: false, cut: 'protocol' }, 'protocol_error'],
    ['SMTP_PROXY down or refusing', { kind: 'unreachable', cause: 'proxy', detail: 'connect ECONNREFUSED' }, 'proxy_failed'],
  ])('%s at every MX: unknown/%s, whatever a bare failure said elsewhere', (_what, outcome, reason) => {
    const targets = [T('mx1', '10.0.0.1', 0), T('mx2', '10.0.0.2', 1)];
    const scripts = { '10.0.0.1': { session: outcome }, '10.0.0.2': { session: { kind: 'unreachable', cause: 'refused' } as SessionOutcome } };
    expect(run(targets, scripts, ['a']).verdicts.get('a')).toMatchObject({ status: 'unknown', reason });
    expect(run([T('mx1', '10.0.0.1', 0)], scripts, ['a']).verdicts.get('a')).toMatchObject({ status: 'unknown', reason });
  });

  it('past the deadline, a user with no answer timed out', () => {
    const plan = new VerificationPlan({ domain: 'd.test', users: ['a'], targets: [T('mx1', '10.0.0.1', 0)], plainHosts: new Set(), catchAllKnown: null, claimProbe: () => true, probeLocalPart: () => 'p' });
    plan.start();
    expect(plan.verdicts(null, true).get('a')).toMatchObject({ status: 'unknown', reason: 'timeout' });
  });
});

describe('chunks and recipient limits', () => {
  it('45 users: sessions of 20, 20 and 5, the probe once', () => {
    const who = Array.from({ length: 45 }, (_, i) => `u${i}`);
    const { log, verdicts } = run([T('mx', '10.0.0.1', 0)], { '10.0.0.1': { rcpt: (a) => (a.startsWith('u') ? ok : unknownUser) } }, who);
    expect(log.map((l) => l.rcpts.filter((r) => r.startsWith('u')).length)).toEqual([20, 20, 5]);
    expect(log.flatMap((l) => l.rcpts).filter((r) => r.startsWith('probe'))).toEqual(['probe0@example.test']);
    expect([...verdicts.values()].every((v) => v.status === 'deliverable' && v.catchAll === false)).toBe(true);
  });

  it('452 after three: the rest in sessions of three, each user asked until answered once', () => {
    const who = Array.from({ length: 8 }, (_, i) => `u${i}`);
    const rcpt = (a: string, i: number): SmtpReply => (i >= 3 ? { code: 452, enhancedCode: '4.5.3' } : a.startsWith('u') ? ok : unknownUser);
    const { log, verdicts } = run([T('mx', '10.0.0.1', 0)], { '10.0.0.1': { rcpt } }, who);
    const answered = log.flatMap((l) => l.rcpts.slice(0, 3)).filter((r) => r.startsWith('u'));
    expect(new Set(answered).size).toBe(8);
    expect(answered).toHaveLength(8);
    expect([...verdicts.values()].every((v) => v.status === 'deliverable')).toBe(true);
  });

  it('a known catch-all state: no probe', () => {
    const { log, verdicts } = run([T('mx', '10.0.0.1', 0)], {}, ['a'], { catchAllKnown: true });
    expect(log[0].rcpts).toEqual(['a@example.test']);
    expect(verdicts.get('a')).toMatchObject({ status: 'risky', reason: 'catch_all' });
  });

  it('another verification holds the probe: none sent, the plan says it waits for it', () => {
    const { log, plan } = run([T('mx', '10.0.0.1', 0)], {}, ['a'], { claim: () => false });
    expect(log.flatMap((l) => l.rcpts)).toEqual(['a@example.test']);
    expect(plan.awaitsProbe()).toBe(true);
    expect(plan.verdicts(true).get('a')).toMatchObject({ status: 'risky', reason: 'catch_all' });
  });
});

describe('STARTTLS and SMTPUTF8', () => {
  it('a failed STARTTLS: the same address again in plain, the host reported', () => {
    const { log, tlsFailedHosts, verdicts } = run([T('mx', '10.0.0.1', 0)], { '10.0.0.1': { brokenTls: true, rcpt: users('a') } }, ['a']);
    expect(log.map((l) => l.tls)).toEqual([true, false]);
    expect(tlsFailedHosts).toEqual(['mx']);
    expect(verdicts.get('a')).toMatchObject({ status: 'deliverable', tls: false });
  });

  it('a host remembered for a failed STARTTLS: plain from the start', () => {
    const { log } = run([T('mx', '10.0.0.1', 0)], { '10.0.0.1': { brokenTls: true, rcpt: users('a') } }, ['a'], { plain: ['mx'] });
    expect(log.map((l) => l.tls)).toEqual([false]);
  });

  it('a UTF-8 local part at a server without SMTPUTF8: no RCPT for it, unknown/smtputf8_unsupported', () => {
    const { log, verdicts } = run([T('mx', '10.0.0.1', 0)], { '10.0.0.1': { rcpt: users('bob') } }, ['josé', 'bob']);
    expect(log.flatMap((l) => l.rcpts)).not.toContain('josé@example.test');
    expect(verdicts.get('josé')).toMatchObject({ status: 'unknown', reason: 'smtputf8_unsupported', smtpCode: null });
    expect(verdicts.get('bob')).toMatchObject({ status: 'deliverable' });
  });

  it('a UTF-8 local part: the next MX offering SMTPUTF8 is asked', () => {
    const targets = [T('mx1', '10.0.0.1', 0), T('mx2', '10.0.0.2', 1)];
    const { log, verdicts } = run(targets, { '10.0.0.1': {}, '10.0.0.2': { smtpUtf8: true, rcpt: users('josé') } }, ['josé']);
    expect(log.find((l) => l.address === '10.0.0.2')!.rcpts[0]).toBe('josé@example.test');
    expect(verdicts.get('josé')).toMatchObject({ status: 'deliverable', mxHost: 'mx2' });
  });
});

describe('the probe claim', () => {
  it('is asked for once, however many sessions want the probe', () => {
    let claims = 0;
    const who = Array.from({ length: 8 }, (_, i) => `u${i}`);
    const rcpt = (a: string, i: number): SmtpReply => (i >= 3 ? { code: 452, enhancedCode: '4.5.3' } : a.startsWith('u') ? ok : unknownUser);
    const { log } = run([T('mx', '10.0.0.1', 0)], { '10.0.0.1': { rcpt } }, who, { claim: () => ++claims === 1 });
    expect(claims).toBe(1);
    expect(log.flatMap((l) => l.rcpts).filter((r) => r.startsWith('probe'))).toEqual(['probe0@example.test']);
  });
});
