// SMTP replies as mailbox verdicts: RFC 5321 §4.2 reply codes and RFC 3463 enhanced status codes (class.subject.detail).
import { readReplyText, type TextMeaning } from './smtp-reply-texts.js';

export type DeliverabilityStatus = 'deliverable' | 'undeliverable' | 'risky' | 'unknown' | 'not_checked';

export type DeliverabilityReason =
  | 'accepted'
  | 'mailbox_not_found'
  | 'mailbox_disabled'
  | 'mailbox_full'
  | 'catch_all'
  | 'greylisted'
  | 'blocked'
  | 'rejected'
  | 'mailbox_unavailable'
  | 'timeout'
  | 'connection_failed'
  | 'protocol_error'
  | 'proxy_failed'
  | 'limits_unavailable'
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

/** One reply of a server: its code, its enhanced status code if it has one, and its text. */
export interface SmtpReply {
  code: number;
  enhancedCode: string | null;
  /**
   * The text of every line after the code, joined by spaces: read only to settle what the codes leave open
   * (smtp-reply-texts.ts). It may hold the address asked about: never logged, never returned. Absent: codes only.
   */
  text?: string;
}

/** A verdict without a server's word: the request did not ask, the operator turned it off, or DNS decided. */
export function verdictWithoutSession(status: DeliverabilityStatus, reason: DeliverabilityReason, mxHost: string | null = null): Deliverability {
  return { status, reason, catchAll: null, mxHost, smtpCode: null, enhancedCode: null, tls: null };
}

const canonical = (m: RegExpExecArray): string => `${m[1]}.${Number(m[2])}.${Number(m[3])}`;

/**
 * The enhanced status code of a reply (RFC 3463 §2): where RFC 2034 §4 puts it, at the start of the text, or in qmail's
 * trailing `(#5.1.1)` form. Its class must be the reply code's own first digit (a `5.1.1` on a 250 is no status code of
 * that reply); null when there is none.
 */
export function enhancedCodeOf(code: number, text: string): string | null {
  const klass = String(Math.floor(code / 100));
  const leading = /^([245])\.(\d{1,3})\.(\d{1,3})(?:\s|$)/.exec(text);
  if (leading) return leading[1] === klass ? canonical(leading) : null;
  const trailing = /\(#([245])\.(\d{1,3})\.(\d{1,3})\)[\s.]*$/.exec(text);
  return trailing && trailing[1] === klass ? canonical(trailing) : null;
}

/** One reply from the texts of its lines (each line's code and separator taken off, RFC 5321 §4.2.1). */
export function replyOf(code: number, texts: readonly string[]): SmtpReply {
  const text = texts.join(' ');
  return { code, enhancedCode: enhancedCodeOf(code, text), text };
}

type Verdict = Pick<Deliverability, 'status' | 'reason'>;

/**
 * A refusal of the session itself, before any recipient was judged (the greeting, EHLO/HELO, MAIL FROM): the mailbox
 * was not judged, so the verdict is never `undeliverable`. 4xx: try later (`greylisted`); 5xx: the server will not talk
 * to this verifier (a listed IP, a refused sender: 5.7.x, or any other permanent refusal: `blocked`).
 */
export function sessionRefusal(reply: SmtpReply): Verdict {
  return reply.code >= 400 && reply.code < 500 ? { status: 'unknown', reason: 'greylisted' } : { status: 'unknown', reason: 'blocked' };
}

const ACCEPTED: Verdict = { status: 'deliverable', reason: 'accepted' };
const GREYLISTED: Verdict = { status: 'unknown', reason: 'greylisted' };
const BLOCKED: Verdict = { status: 'unknown', reason: 'blocked' };
const REJECTED: Verdict = { status: 'unknown', reason: 'rejected' };
const NOT_FOUND: Verdict = { status: 'undeliverable', reason: 'mailbox_not_found' };
const DISABLED: Verdict = { status: 'undeliverable', reason: 'mailbox_disabled' };
const FULL: Verdict = { status: 'risky', reason: 'mailbox_full' };
const UNAVAILABLE: Verdict = { status: 'unknown', reason: 'mailbox_unavailable' };

const BY_TEXT: Record<TextMeaning, Verdict> = { not_found: NOT_FOUND, disabled: DISABLED, full: FULL, rate: GREYLISTED, refused: BLOCKED };

/** The subject and detail of an enhanced code (`5.1.1` -> [1, 1]); null without one. */
const subjectOf = (enhanced: string | null): [number, number] | null => {
  if (enhanced === null) return null;
  const [, subject, detail] = enhanced.split('.').map(Number);
  return [subject, detail];
};

/** What the text says, when the codes leave the question open; `fallback` when no row of the table explains it. */
const byText = (reply: SmtpReply, fallback: Verdict): Verdict => {
  const row = readReplyText(reply.text ?? '');
  return row ? BY_TEXT[row.meaning] : fallback;
};

/**
 * 5.2.x is mailbox status (RFC 3463 §3.3): never a policy reason. X.2.2 full; X.2.1 disabled unless the text says a rate
 * limit (Gmail) or a refusal; any other detail as its text says of the mailbox, else `mailbox_unavailable`.
 */
function mailboxStatus(reply: SmtpReply, detail: number): Verdict {
  if (detail === 2) return FULL;
  const meaning = readReplyText(reply.text ?? '')?.meaning;
  if (meaning === 'rate') return GREYLISTED;
  if (meaning === 'refused') return UNAVAILABLE;
  if (detail === 1) return DISABLED;
  return meaning === undefined ? UNAVAILABLE : BY_TEXT[meaning];
}

/**
 * 5.1.x is the address (RFC 3463 §3.2): not found, unless the text says the refusal is the verifier's (a blocklist, the
 * sender) or a 552 disagrees with it; 5.1.7 and 5.1.8 are the sender's address; 5.1.0 says nothing more than a plain code.
 */
function addressStatus(reply: SmtpReply, detail: number): Verdict {
  if (detail === 7 || detail === 8) return BLOCKED;
  if (detail === 0 || reply.code === 552) return byText(reply, REJECTED);
  const meaning = readReplyText(reply.text ?? '')?.meaning;
  return meaning === 'refused' || meaning === 'rate' ? BY_TEXT[meaning] : NOT_FOUND;
}

/**
 * The verdict of the reply to `RCPT TO` (RFC 5321 §4.2.2-4.2.3, RFC 3463 §3; docs/adr/0028). Codes first, then the text:
 * - any 2xx: accepted;
 * - any 4xx: never undeliverable; X.2.2 or an over-quota text: risky/mailbox_full; else unknown/greylisted;
 * - 5.7.x (security or policy): unknown/blocked, whatever the text says: the mailbox was not judged;
 * - 5.2.x and 5.1.x (mailbox and address status): as mailboxStatus and addressStatus say;
 * - where the codes leave the mailbox open (a plain 5xx, 5.0.0, subjects 3-6): the reply-text table decides; with no
 *   row, a 552 is mailbox_full (its basic code says so) and any other is unknown/rejected: RFC 5321 gives 550 to
 *   policy refusals too, and a false undeliverable is the worst answer.
 */
export function recipientVerdict(reply: SmtpReply): Verdict {
  const { code } = reply;
  if (code >= 200 && code < 300) return ACCEPTED;
  const sd = subjectOf(reply.enhancedCode);
  if (code >= 400 && code < 500) return sd?.[0] === 2 && sd[1] === 2 ? FULL : readReplyText(reply.text ?? '')?.meaning === 'full' ? FULL : GREYLISTED;
  if (code < 500 || code >= 600) return REJECTED;
  if (sd?.[0] === 7) return BLOCKED;
  if (sd?.[0] === 2) return mailboxStatus(reply, sd[1]);
  if (sd?.[0] === 1) return addressStatus(reply, sd[1]);
  return byText(reply, code === 552 ? FULL : REJECTED);
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
