// The reply texts that decide where an SMTP reply's codes leave the mailbox question open (RFC 5321 §4.2.3 gives 550
// to missing mailboxes and policy refusals alike; RFC 3463 X.0.0 and subjects 3-6 say nothing of the mailbox). Each row
// names where its wording is published; docs/adr/0028-reading-smtp-replies.md has the corpus the rows were read from.

/** What a reply's wording says: about the mailbox, or that the refusal is about the verifier (its IP, its session). */
export type TextMeaning = 'not_found' | 'disabled' | 'full' | 'rate' | 'refused';

interface TextRow {
  meaning: TextMeaning;
  pattern: RegExp;
  /** Where this wording is documented or stated (an RFC, the MTA's documentation or source, a provider's page). */
  source: string;
}

/**
 * In order; the first row that matches decides. The mailbox rows (disabled, full) come first, so that "This mailbox has
 * been blocked due to inactivity" reads as disabled; the refusal rows come before the no-such-user rows, so that a
 * reply naming both a blocklist and a user (a false "undeliverable" is the worst error) reads as a refusal.
 */
const REPLY_TEXTS: readonly TextRow[] = [
  { meaning: 'disabled', pattern: /\b(?:mailbox|account|user) (?:is |has been )?(?:disabled|deactivated|suspended|inactive)\b|\bdue to inactivity\b|\bis disabled\b/i, source: 'Gmail (support.google.com/a/answer/3726730 "is disabled"); Yahoo postmaster error codes (554.30 "This mailbox is disabled"); Free.fr; Mail.ru "account is disabled"' },
  { meaning: 'full', pattern: /\bover ?quota\b|\bquota (?:exceeded|violation)\b|\bmailbox (?:is )?full\b|\bmailbox size limit\b|\bexceeded (?:its |their |the )?storage\b|\btoo many messages\b|\bout of storage\b|\bmailbox .{0,20}pleine?\b/i, source: 'RFC 5321 §4.2.2 (552 "exceeded storage allocation"); RFC 3463 X.2.2; Gmail "over quota"; iCloud "user is overquota"; Sendmail "Mailbox is full"; qmail chkuser "mailbox is full"; Yandex "Mailbox size limit exceeded"' },
  { meaning: 'rate', pattern: /\breceiving mail (?:at a rate|too quickly)\b|\brate limit(?:ed)?\b|\bper hour\b|\btoo many (?:recent messages|connections)\b|\btry again later\b|\btemporar(?:y|ily)\b/i, source: 'Gmail 4.2.1/5.2.1 "receiving mail at a rate"; Yahoo "receiving mail too quickly"; Exchange Online 5.2.122 "per hour"; Outlook.com 4.7.650 "rate limited"' },
  { meaning: 'refused', pattern: /\bblack ?list(?:ed)?\b|\bblock ?list(?:ed)?\b|\bblocked\b|\bbloquee\b|\b(?:rbl|dnsbl)\b|\bspamhaus\b|\bspamcop\b|\bbarracuda\b|\bin an rbl\b|\blisted (?:in|at|on)\b|\brefused by\b/i, source: 'Postfix default_rbl_reply ("blocked using"); Exim dnslists ("is in a black list at"); cPanel "JunkMail rejected ... is in an RBL"; Sendmail dnsbl ("refused by"); Barracuda "Blocked"; Trend Micro ERS; Yahoo [BL21]' },
  { meaning: 'refused', pattern: /\breputation\b|\bspam\b|\bunsolicited\b|\bjunkmail\b|\bspoof(?:ed|ing)?\b|\bdmarc\b|\bspf\b|\bdkim\b/i, source: 'Mimecast "Poor Reputation Sender", "Anti-Spoofing policy"; Symantec "sender IP reputation"; Gmail "unsolicited mail"; QQ "Suspected spam sender"; Barracuda "rejecting spoofed message"' },
  { meaning: 'refused', pattern: /\brelay(?:ing)? (?:access )?(?:denied|not permitted|disallowed|prohibited)\b|\bnot in my list of allowed rcpthosts\b|\brelay not permitted\b/i, source: 'Postfix "Relay access denied" (reject_unauth_destination); Exim default configure "relay not permitted"; Sendmail "Relaying denied"; qmail-smtpd "allowed rcpthosts"' },
  { meaning: 'refused', pattern: /\bclient host\b|\byour (?:ip|host|server|location|address)\b|\bsending ip\b|\bsender (?:verify failed|(?:address )?rejected|is blocklisted)\b|\bbadmailfrom\b|\badministrative(?:ly)? (?:prohibition|prohibited|denied)\b|\baccess denied\b|\bdenied by policy\b|\bpolicy (?:reasons|restrictions|rejection)\b|\blocal policy\b|\banti-spoofing policy\b|\breverse dns\b|\bptr record\b|\benvelope blocked\b/i, source: 'Postfix "Client host rejected", access(5) "Access denied"; Spambrella "sender rejected"; Exim "Administrative prohibition", "Sender verify failed"; qmail-smtpd badmailfrom; Microsoft 365 5.4.1/5.7.606 "Access denied"; Mimecast "Envelope blocked"; Symantec "Denied by policy"; Yahoo "policy reasons"' },
  { meaning: 'not_found', pattern: /\bno such (?:user|mailbox|recipient|account|address)\b|\b(?:user|recipient|addressee) (?:unknown|not found)\b|\bunknown (?:user|recipient|addressee|local part)\b|\bdoes ?n[o']t exist\b|\bdoes not exist\b|\bdoes ?n[o']t have an? [\w.-]+ account\b|\bno mailbox here by that name\b|\bmailbox not found\b|\brecipient not found\b|\binvalid (?:recipient|mailbox)\b|\bnot our customer\b|\bis no longer valid\b|\bcould not be found\b|\bunrouteable address\b|\bmailbox unallocated\b/i, source: 'RFC 5321 App. D.1 "No such user here"; Postfix "User unknown in local recipient table"; Sendmail "User unknown"; qmail/vpopmail "no mailbox here by that name"; Exim verify=recipient "Unrouteable address"; cPanel "No Such User Here"; Gmail "does not exist"; Yahoo "doesn\'t have a yahoo.com account"; Mimecast "Invalid Recipient"' },
];

/** The first row whose wording the text has; null when none does. */
export function readReplyText(text: string): TextRow | null {
  for (const row of REPLY_TEXTS) if (row.pattern.test(text)) return row;
  return null;
}
