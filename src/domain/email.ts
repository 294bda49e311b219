// Email address syntax and classification (RFC 5321 §4.5.3.1 lengths, RFC 5322 addr-spec, RFC 6531 UTF-8 local parts, IDNA domains).
import isEmailModule from 'validator/lib/isEmail.js';
import { maskCardNumbers } from './card.js';
import { domainToAscii } from './idna.js';
import { MAJOR_PROVIDERS, POPULAR_EMAIL_DOMAINS } from './popular-mail-domains.js';

export interface ParsedEmail {
  /** Trimmed; the domain lower-cased and in A-labels (when convertible). */
  email: string;
  /** Local part (before the last '@'), as written; the whole input when there is no '@'. */
  user: string;
  /** Domain part in lower-case A-labels; as written (lower-cased) when not convertible; "" without '@'. */
  domain: string;
  validFormat: boolean;
  /** Why the format is not valid (the first rule broken); absent when validFormat is true. */
  formatProblem?: string;
}

/** The reference lists classification works on (loaded by src/adapters/mail/email-lists.ts), all lower case. */
export interface EmailLists {
  roleLocalParts: ReadonlySet<string>;
  disposableDomains: ReadonlySet<string>;
  /** A listed domain and all its subdomains are disposable. */
  disposableWildcardDomains: ReadonlySet<string>;
  freeDomains: ReadonlySet<string>;
}

interface EmailClassification {
  roleAddress: boolean;
  disposableEmail: boolean;
  freeEmailProvider: boolean;
  /** The address with a popular domain the given one looks like a typo of; null when none. */
  didYouMean: string | null;
}

// validator's CommonJS module is the function and also carries it as .default; its types only know the latter.
const isEmail = isEmailModule.default;

const MAX_LOCAL_OCTETS = 64;
const MAX_ADDRESS_OCTETS = 254;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** Characters that end a host in a URL, or never belong to one: not even UTS #46 mapping may see them. */
const NOT_IN_A_DOMAIN = /[\s%/\\@[\]?#]/;

const octets = (s: string): number => Buffer.byteLength(s, 'utf8');

/** IDN → lower-case A-labels (UTS #46 as WHATWG URLs process it, src/domain/idna.ts); "" when the text cannot be a domain. */
export function toAsciiDomain(text: string): string {
  if (!text || NOT_IN_A_DOMAIN.test(text)) return '';
  return domainToAscii(text) ?? '';
}

/** A mail domain: ≥ 2 LDH labels of 1-63 octets, ≤ 253 octets, alphabetic (or IDN xn--) TLD. No trailing dot. */
function isMailDomain(ascii: string): boolean {
  if (!ascii || ascii.length > 253) return false;
  const labels = ascii.split('.');
  return labels.length >= 2 && labels.every((l) => LDH_LABEL.test(l)) && TLD.test(labels[labels.length - 1]);
}

/**
 * Characters nobody sees: controls (C0, DEL, C1: Unicode category Cc), format characters (Cf: zero-width
 * spaces and joiners, bidirectional overrides such as U+202E, soft hyphen, word joiner...) and the line and
 * paragraph separators. An address holding one displays as another address (UTS #39 §3 confusables), and IDNA
 * mapping silently drops some of them from a domain, so such an address is refused outright.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

const codePoint = (ch: string): string => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** The first format rule `user@domain` breaks, or undefined when it is well-formed. */
function formatProblemOf(text: string, user: string, rawDomain: string, ascii: string, email: string): string | undefined {
  const invisible = INVISIBLE.exec(text);
  if (invisible) return `contains an invisible or control character (${codePoint(invisible[0])})`;
  if (user.length === 0) return 'the local part (before the @) is empty';
  if (octets(user) > MAX_LOCAL_OCTETS) return `the local part is longer than ${MAX_LOCAL_OCTETS} octets`;
  if (octets(email) > MAX_ADDRESS_OCTETS) return `the address is longer than ${MAX_ADDRESS_OCTETS} octets`;
  if (ascii === '' && !NOT_IN_A_DOMAIN.test(rawDomain) && /xn--|[^\x00-\x7f]/i.test(rawDomain)) {
    return 'the domain is not a valid internationalised domain name (UTS #46)';
  }
  if (!isMailDomain(ascii)) return 'the domain is not a host name of at least two labels with an alphabetic top-level domain';
  const ok = isEmail(forSyntaxCheck(user, ascii), {
    allow_display_name: false,
    allow_utf8_local_part: true,
    require_tld: true,
    allow_ip_domain: false,
    allow_underscores: false,
    ignore_max_length: false,
  });
  return ok ? undefined : 'the local part is not valid address syntax (RFC 5322, RFC 6531)';
}

/** Split, normalise and check the syntax of one address. Pure and total. */
export function parseEmailAddress(input: string): ParsedEmail {
  const s = typeof input === 'string' ? input.trim() : '';
  const at = s.lastIndexOf('@');
  if (at < 0) return { email: s, user: s, domain: '', validFormat: false, formatProblem: 'there is no @ between a local part and a domain' };
  const user = s.slice(0, at);
  const rawDomain = s.slice(at + 1);
  const ascii = toAsciiDomain(rawDomain);
  const domain = ascii || rawDomain.toLowerCase();
  const email = `${user}@${domain}`;
  const formatProblem = formatProblemOf(s, user, rawDomain, ascii, email);
  return formatProblem ? { email, user, domain, validFormat: false, formatProblem } : { email, user, domain, validFormat: true };
}

/**
 * The address validator's UTF-8 local-part class stops at U+FFFF, while RFC 6532 §3.2 admits every non-ASCII
 * code point (UTF8-4 too: emoji, supplementary CJK). Each well-formed surrogate pair is checked as one BMP
 * letter in its place; a lone surrogate fails. Lengths are checked in octets on the real text above.
 */
const ASTRAL = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
function forSyntaxCheck(user: string, domain: string): string {
  const bmp = user.replace(ASTRAL, '\u00E9');
  // A lone surrogate is no character at all (nothing decodes to one); make sure it fails.
  return `${/[\uD800-\uDFFF]/.test(bmp) ? ' ' : bmp}@${domain}`;
}

/** Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent transpositions cost 1. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  // Three rolling rows (the transposition needs two back); stop once a whole row exceeds max.
  let prev2 = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      row[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, row] = [prev, row, prev2];
  }
  return prev[b.length];
}

export interface EmailClassifier {
  /** A role mailbox (admin@, info@, ...); a `+tag` is ignored, so admin+x@ is one too. */
  isRoleAddress(user: string): boolean;
  /** Listed as disposable, or a subdomain of (or equal to) a wildcard-listed disposable domain. */
  isDisposableDomain(domain: string): boolean;
  isFreeEmailDomain(domain: string): boolean;
  /**
   * The popular domain `domain` is most likely a typo of, or null. Popular domains are never corrected, free
   * providers only when one edit from a major provider (yaho.com → yahoo.com); the allowed distance grows with
   * length to avoid false hits on short real domains: none under 6 characters, 1 from 6, 2 from 10.
   */
  suggestDomain(domain: string): string | null;
  /** Role/disposable/free flags (false for a malformed address) and the typo suggestion (a well-formed address or null). */
  classifyEmail(parsed: ParsedEmail): EmailClassification;
}

/** Suggestions remembered per domain, at most (the answer for a domain never changes). */
const MAX_REMEMBERED = 10_000;

export function createEmailClassifier(lists: EmailLists): EmailClassifier {
  const suggestions = new Map<string, string | null>();

  const isRoleAddress = (user: string): boolean => {
    const base = user.toLowerCase().replace(/^"|"$/g, '').split('+')[0];
    return base.length > 0 && lists.roleLocalParts.has(base);
  };

  const isDisposableDomain = (domain: string): boolean => {
    const d = domain.toLowerCase();
    if (lists.disposableDomains.has(d)) return true;
    const labels = d.split('.');
    for (let i = 0; i < labels.length - 1; i++) {
      if (lists.disposableWildcardDomains.has(labels.slice(i).join('.'))) return true;
    }
    return false;
  };

  const isFreeEmailDomain = (domain: string): boolean => lists.freeDomains.has(domain.toLowerCase());

  /** The nearest of `candidates` within `allowed` edits (ties: the earlier one). */
  const nearest = (d: string, candidates: readonly string[], allowed: number): string | null => {
    let best: string | null = null;
    let bestDistance = allowed + 1;
    for (const candidate of candidates) {
      if (Math.abs(candidate.length - d.length) >= bestDistance) continue;
      const dist = editDistance(d, candidate, bestDistance - 1);
      if (dist < bestDistance) {
        best = candidate;
        bestDistance = dist;
      }
    }
    return best;
  };

  const findSuggestion = (d: string): string | null => {
    if (!d || POPULAR_EMAIL_DOMAINS.includes(d)) return null;
    // A free provider is a real domain, but one that is itself a typo of a major one ("yaho.com") still is a typo.
    if (lists.freeDomains.has(d)) return d.length >= 6 ? nearest(d, POPULAR_EMAIL_DOMAINS.slice(0, MAJOR_PROVIDERS), 1) : null;
    return nearest(d, POPULAR_EMAIL_DOMAINS, d.length >= 10 ? 2 : d.length >= 6 ? 1 : 0);
  };

  const suggestDomain = (domain: string): string | null => {
    const d = domain.toLowerCase();
    const known = suggestions.get(d);
    if (known !== undefined) return known;
    const found = findSuggestion(d);
    if (suggestions.size >= MAX_REMEMBERED) suggestions.delete(suggestions.keys().next().value!);
    suggestions.set(d, found);
    return found;
  };

  const classifyEmail = (parsed: ParsedEmail): EmailClassification => {
    const suggestion = parsed.user && parsed.domain ? suggestDomain(parsed.domain) : null;
    const didYouMean = suggestion ? `${parsed.user}@${suggestion}` : null;
    return {
      roleAddress: parsed.validFormat && isRoleAddress(parsed.user),
      disposableEmail: parsed.validFormat && isDisposableDomain(parsed.domain),
      freeEmailProvider: parsed.validFormat && isFreeEmailDomain(parsed.domain),
      didYouMean: didYouMean && parseEmailAddress(didYouMean).validFormat ? didYouMean : null,
    };
  };

  return { isRoleAddress, isDisposableDomain, isFreeEmailDomain, suggestDomain, classifyEmail };
}

/** The fields of an email result that echo the client's text. */
interface EchoedEmailFields {
  email: string;
  user: string;
  domain: string;
  didYouMean: string | null;
}

/**
 * `result` with every card number (12-19 digits passing Luhn, however grouped) masked to its last four in the
 * fields that echo the address: a card number sent as an address is never echoed (openapi.yaml, EmailValidationResult).
 */
export function maskEchoedEmail<T extends EchoedEmailFields>(result: T): T {
  return {
    ...result,
    email: maskCardNumbers(result.email),
    user: maskCardNumbers(result.user),
    domain: maskCardNumbers(result.domain),
    didYouMean: result.didYouMean === null ? null : maskCardNumbers(result.didYouMean),
  };
}
