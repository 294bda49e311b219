// How SMTP verification sessions end, for operators (RFC 5321 reply classes, RFC 3463 X.7.X policy codes): one label
// per session, and the "verifier probably listed" signal: most recent sessions, at several domains, refused by policy.
import type { SessionOutcome } from './smtp-plan.js';
import { recipientVerdict } from './smtp-reply.js';

/** The `outcome` label of smtp_sessions_total. */
export type SessionLabel = 'answered' | 'blocked' | 'deferred' | 'timeout' | 'unreachable' | 'tls_failed' | 'cancelled';

export const SESSION_LABELS: readonly SessionLabel[] = ['answered', 'blocked', 'deferred', 'timeout', 'unreachable', 'tls_failed', 'cancelled'];

/**
 * A session's label: `blocked` when the server refused the session with a 5xx or refused every recipient asked by
 * policy (the verifier, not the mailbox, was judged), `deferred` for a 4xx refusal of the session.
 */
export function sessionLabel(outcome: SessionOutcome, cancelled: boolean): SessionLabel {
  if (cancelled) return 'cancelled';
  switch (outcome.kind) {
    case 'unreachable':
      return outcome.cause === 'timeout' ? 'timeout' : 'unreachable';
    case 'tls_failed':
      return 'tls_failed';
    case 'refused':
      return outcome.reply.code >= 500 ? 'blocked' : 'deferred';
    case 'answered': {
      const reasons = outcome.replies.map((r) => recipientVerdict(r).reason);
      if (reasons.length > 0 && reasons.every((r) => r === 'blocked')) return 'blocked';
      return outcome.cut === 'timeout' && reasons.length === 0 ? 'timeout' : 'answered';
    }
  }
}

export interface ListingWatchOptions {
  /** Sessions remembered (the most recent ones that reached a server's word). */
  window: number;
  /** Share of them blocked from which the verifier counts as listed. */
  share: number;
  /** Distinct domains among the blocked ones needed (one domain's policy says nothing of the verifier's IP). */
  minDomains: number;
}

/**
 * Default: of the last 100 sessions that got a server's word, half blocked, at 5 domains or more. A listed IP is
 * refused everywhere a blocklist is consulted (Spamhaus, Barracuda, Microsoft's own), so the share jumps; a few
 * strict domains in a bulk do not reach 5 distinct ones.
 */
const LISTING_WATCH: ListingWatchOptions = { window: 100, share: 0.5, minDomains: 5 };

export interface ListingWatch {
  /** Note how a session at `domain` ended; 'listed' or 'cleared' when the state changes with it, else null. */
  record(domain: string, label: SessionLabel): 'listed' | 'cleared' | null;
  listed(): boolean;
  /** Share of the remembered sessions that were blocked (0 without any). */
  blockedShare(): number;
}

export function createListingWatch(o: ListingWatchOptions = LISTING_WATCH): ListingWatch {
  const recent: Array<{ domain: string; blocked: boolean }> = [];
  let listed = false;
  const blockedShare = (): number => (recent.length === 0 ? 0 : recent.filter((s) => s.blocked).length / recent.length);
  return {
    record(domain, label) {
      // Sessions that never reached a server's word (timeouts, refused connections, cancels) say nothing of a listing.
      if (label !== 'answered' && label !== 'blocked' && label !== 'deferred') return null;
      recent.push({ domain, blocked: label === 'blocked' });
      if (recent.length > o.window) recent.shift();
      const domains = new Set(recent.filter((s) => s.blocked).map((s) => s.domain)).size;
      const now = blockedShare() >= o.share && domains >= o.minDomains;
      if (now === listed) return null;
      listed = now;
      return now ? 'listed' : 'cleared';
    },
    listed: () => listed,
    blockedShare,
  };
}
