// SMTP replies as mailbox verdicts: RFC 5321 §4.2 reply codes and RFC 3463 enhanced status codes (class.subject.detail).

export type DeliverabilityStatus = 'deliverable' | 'undeliverable' | 'risky' | 'unknown' | 'not_checked';

export type DeliverabilityReason =
  | 'accepted'
  | 'mailbox_not_found'
  | 'mailbox_disabled'
  | 'mailbox_full'
  | 'catch_all'
  | 'greylisted'
  | 'blocked'
  | 'timeout'
  | 'connection_failed'
  | 'smtputf8_unsupported'
  | 'null_mx'
  | 'no_mail_server'
  | 'invalid_format'
  | 'not_requested'
  | 'disabled';

/** The `deliverability` object of an email result (openapi.yaml, Deliverability). */
export interface Deliverability {
  status: DeliverabilityStatus;
  reason: DeliverabilityReason;
  catchAll: boolean | null;
  mxHost: string | null;
  smtpCode: number | null;
  enhancedCode: string | null;
  tls: boolean | null;
}

/** One reply of a server: its code and the enhanced code its text starts with, if any. */
export interface SmtpReply {
  code: number;
  enhancedCode: string | null;
}

/** A verdict without a server's word: the request did not ask, the operator turned it off, or DNS decided. */
export function verdictWithoutSession(status: DeliverabilityStatus, reason: DeliverabilityReason, mxHost: string | null = null): Deliverability {
  return { status, reason, catchAll: null, mxHost, smtpCode: null, enhancedCode: null, tls: null };
}

/**
 * The enhanced status code a reply line's text opens with (RFC 3463 §2, RFC 2034 §4): `class.subject.detail`, the class
 * the reply code's own first digit (a `5.1.1` on a 250 is no status code of that reply); null when there is none.
 */
export function enhancedCodeOf(code: number, text: string): string | null {
  const m = /^([245])\.(\d{1,3})\.(\d{1,3})(?:\s|$)/.exec(text);
  if (!m || Number(m[1]) !== Math.floor(code / 100)) return null;
  return `${m[1]}.${Number(m[2])}.${Number(m[3])}`;
}

type Verdict = Pick<Deliverability, 'status' | 'reason'>;

/** The subject and detail of an enhanced code (`5.1.1` -> [1, 1]); null without one. */
const subjectOf = (enhanced: string | null): [number, number] | null => {
  if (enhanced === null) return null;
  const [, subject, detail] = enhanced.split('.').map(Number);
  return [subject, detail];
};

/**
 * A refusal of the session itself, before any recipient was judged (the greeting, EHLO/HELO, MAIL FROM): the mailbox
 * was not judged, so the verdict is never `undeliverable`. 4xx: try later (`greylisted`); 5xx: the server will not talk
 * to this verifier (a listed IP, a refused sender: 5.7.x, or any other permanent refusal: `blocked`).
 */
export function sessionRefusal(reply: SmtpReply): Verdict {
  return reply.code >= 400 && reply.code < 500 ? { status: 'unknown', reason: 'greylisted' } : { status: 'unknown', reason: 'blocked' };
}

/**
 * The verdict of the reply to `RCPT TO` (RFC 5321 §4.2.2-4.2.3, RFC 3463 §3.2-3.8). Codes decide, never the text:
 * - 250/251 (and any 2xx): accepted;
 * - any 4xx (450/451/452/421: greylisting, rate limits, a full disk): unknown/greylisted, never undeliverable;
 * - 5.7.x (security or policy: the verifier's IP or sender refused): unknown/blocked, the mailbox was not judged;
 * - 5.2.1: mailbox disabled; 552 or 5.2.2: mailbox full (risky: it exists but takes nothing now);
 * - 5.1.x (bad destination address), or 550/551/553 without an enhanced code or with the catch-all 5.0.0 (whose
 *   basic code alone is meaningful, RFC 3463 §3.1): mailbox not found;
 * - any other 5xx (5.3.x system, 5.4.x routing, 5.5.x protocol, 554 alone): unknown/blocked, not a judgement of the mailbox.
 */
export function recipientVerdict(reply: SmtpReply): Verdict {
  const { code } = reply;
  if (code >= 200 && code < 300) return { status: 'deliverable', reason: 'accepted' };
  if (code >= 400 && code < 500) return { status: 'unknown', reason: 'greylisted' };
  const sd = subjectOf(reply.enhancedCode);
  if (sd?.[0] === 7) return { status: 'unknown', reason: 'blocked' };
  if (sd?.[0] === 2 && sd[1] === 1) return { status: 'undeliverable', reason: 'mailbox_disabled' };
  if (code === 552 || (sd?.[0] === 2 && sd[1] === 2)) return { status: 'risky', reason: 'mailbox_full' };
  if (sd?.[0] === 1) return { status: 'undeliverable', reason: 'mailbox_not_found' };
  const plain = sd === null || (sd[0] === 0 && sd[1] === 0);
  if (plain && (code === 550 || code === 551 || code === 553)) return { status: 'undeliverable', reason: 'mailbox_not_found' };
  return { status: 'unknown', reason: 'blocked' };
}

/**
 * RFC 5321 §4.5.3.1.10: a server that takes no more recipients in this transaction answers 452 (enhanced 4.5.3);
 * after at least one recipient was answered in the session, the rest go to a new session rather than being judged.
 */
export function tooManyRecipients(reply: SmtpReply): boolean {
  return reply.code === 452 && (reply.enhancedCode === null || reply.enhancedCode === '4.5.3');
}

/**
 * What the reply to the random local part (the catch-all probe) says about the domain: true when it was accepted
 * (every address is), false when refused as not found, null when nothing is known (4xx, a policy refusal, none asked).
 */
export function catchAllOf(probe: SmtpReply | null): boolean | null {
  if (probe === null) return null;
  const verdict = recipientVerdict(probe);
  if (verdict.reason === 'accepted') return true;
  return verdict.reason === 'mailbox_not_found' ? false : null;
}

/**
 * The deliverability of one recipient from the reply to it and what is known of its domain (catch-all or not).
 * An accepted address at a catch-all domain proves nothing: risky/catch_all. A refused probe never changes a
 * refused or deferred real answer; a domain that refused any address is no catch-all.
 */
export function recipientDeliverability(
  reply: SmtpReply,
  domainCatchAll: boolean | null,
  where: { mxHost: string; tls: boolean },
): Deliverability {
  const verdict = recipientVerdict(reply);
  const catchAll = verdict.reason === 'mailbox_not_found' ? false : domainCatchAll;
  const accepted = verdict.reason === 'accepted';
  return {
    ...(accepted && catchAll === true ? { status: 'risky', reason: 'catch_all' } : verdict),
    catchAll,
    mxHost: where.mxHost,
    smtpCode: reply.code,
    enhancedCode: reply.enhancedCode,
    tls: where.tls,
  };
}

/** A definitive verdict (the server judged the mailbox, or DNS says no mail goes there) is kept longer than `unknown`. */
export function isDefinitive(d: Deliverability): boolean {
  return d.status === 'deliverable' || d.status === 'undeliverable' || d.status === 'risky';
}
