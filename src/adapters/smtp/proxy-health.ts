// SMTP_PROXY's health as the SMTP sessions find it (RFC 1928 SOCKS5): a proxy that is down or refuses answers every
// verification `unknown`/`proxy_failed`; operators see it in one warning a minute and in /readyz's `degraded`.
import type { SessionOutcome, SmtpSessionOptions } from './smtp-client.js';

type RunSession = (o: SmtpSessionOptions) => Promise<SessionOutcome>;

export interface ProxyHealth {
  /** The session runner, each outcome through the proxy noted. */
  watch(run: RunSession): RunSession;
  /** While the last session through the proxy failed at the proxy: what /readyz's `degraded.smtpProxy` says; else null. */
  degraded(): string | null;
}

export interface ProxyHealthOptions {
  proxy: { host: string; port: number };
  logger: { warn: (obj: object, msg?: string) => void };
  /** Default Date.now. */
  now?: () => number;
}

/** One warning per this long at most while the proxy keeps failing: every verification would otherwise log one. */
const WARN_EVERY_MS = 60_000;

export function createProxyHealth(o: ProxyHealthOptions): ProxyHealth {
  const now = o.now ?? Date.now;
  const name = `${o.proxy.host}:${o.proxy.port}`;
  let failingSince: number | null = null;
  let lastError = '';
  let warnedAt = -Infinity;

  const note = (outcome: SessionOutcome): void => {
    if (outcome.kind !== 'unreachable' || outcome.cause !== 'proxy') {
      // Any other end means the proxy carried the session (or reached the destination for us).
      failingSince = null;
      return;
    }
    const t = now();
    failingSince ??= t;
    lastError = outcome.detail ?? 'failed';
    if (t - warnedAt >= WARN_EVERY_MS) {
      warnedAt = t;
      // The proxy's own error (e.g. connect ECONNREFUSED): never the address asked about, which the proxy never saw.
      o.logger.warn({ proxy: name, error: lastError, failingSince: new Date(failingSince).toISOString() }, 'SMTP proxy failed');
    }
  };

  return {
    watch: (run) => async (options) => {
      const outcome = await run(options);
      note(outcome);
      return outcome;
    },
    degraded: () =>
      failingSince === null ? null : `SMTP_PROXY ${name} failing since ${new Date(failingSince).toISOString()}: ${lastError}; SMTP verifications answer proxy_failed`,
  };
}
