// Prometheus series of SMTP mailbox verification (prom-client): verdicts by status and reason, sessions by outcome,
// session durations, sessions in flight and the listed-verifier signal. Labels are fixed enums: never an address.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { SESSION_LABELS } from '../../domain/smtp-plan-watch.js';
import type { MailboxVerifier, VerifierEvents } from './mailbox-verifier.js';

/** The verdicts a verification answers (openapi.yaml, Deliverability): their series exist from the start, at 0. */
const VERDICTS: ReadonlyArray<[string, string]> = [
  ['deliverable', 'accepted'],
  ['risky', 'catch_all'],
  ['risky', 'mailbox_full'],
  ['undeliverable', 'mailbox_not_found'],
  ['undeliverable', 'mailbox_disabled'],
  ['undeliverable', 'null_mx'],
  ['undeliverable', 'no_mail_server'],
  ['unknown', 'greylisted'],
  ['unknown', 'blocked'],
  ['unknown', 'timeout'],
  ['unknown', 'connection_failed'],
  ['unknown', 'limits_unavailable'],
  ['unknown', 'smtputf8_unsupported'],
];

/** Session durations, seconds: a quick refusal (tens of ms) up to SMTP_TIMEOUT_MS's range. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The events the verifier reports into the series of `registry`; `stats` fills the gauges at scrape time. */
export function smtpMetrics(registry: Registry): VerifierEvents & { watch(verifier: MailboxVerifier): void } {
  const verdicts = new Counter({ name: 'smtp_verifications_total', help: 'Mailbox verdicts answered (cache hits included), by status and reason', labelNames: ['status', 'reason'], registers: [registry] });
  const sessions = new Counter({ name: 'smtp_sessions_total', help: 'SMTP sessions of mailbox verification, by how they ended', labelNames: ['outcome'], registers: [registry] });
  for (const [status, reason] of VERDICTS) verdicts.inc({ status, reason }, 0);
  for (const outcome of SESSION_LABELS) sessions.inc({ outcome }, 0); // every outcome present from the start (rate() over absent series is empty)
  const duration = new Histogram({ name: 'smtp_session_duration_seconds', help: 'Duration of SMTP sessions, slot held (connect to the socket closed)', buckets: DURATION_BUCKETS, registers: [registry] });
  return {
    verdict: (d) => verdicts.inc({ status: d.status, reason: d.reason }),
    session(label, seconds) {
      sessions.inc({ outcome: label });
      duration.observe(seconds);
    },
    watch(verifier) {
      new Gauge({ name: 'smtp_sessions_in_flight', help: 'SMTP sessions open now', registers: [registry], collect() { this.set(verifier.stats().inFlight); } });
      new Gauge({
        name: 'smtp_verifier_listed',
        help: "1 when most recent SMTP sessions, at 5 domains or more, were refused by policy: the verifier's IP address is probably listed",
        registers: [registry],
        collect() {
          this.set(verifier.stats().listed ? 1 : 0);
        },
      });
      new Gauge({ name: 'smtp_blocked_session_share', help: 'Share of the last 100 SMTP sessions that reached a server refused by policy', registers: [registry], collect() { this.set(verifier.stats().blockedShare); } });
    },
  };
}
