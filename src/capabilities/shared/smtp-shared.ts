// The SMTP verifier's limits and verdict cache one process builds once, for every verifier in it (the requests' and
// the jobs'), and that with Redis every process shares (docs/adr/0033-shared-smtp-limits.md).
import { createSessionSlots, type SessionSlots } from '../../adapters/smtp/host-slots.js';
import { createLocalVerdictCache, type VerdictCache } from '../../adapters/smtp/verdict-cache.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../http/logging.js';

export interface SmtpShared {
  slots: SessionSlots;
  verdicts: VerdictCache;
  close(): Promise<void>;
}

type SmtpSharedConfig = Pick<Config, 'redisUrl' | 'smtpMaxPerHost' | 'smtpMaxSessions' | 'smtpTimeoutMs'>;

/**
 * A lease outlives the longest session (SMTP_TIMEOUT_MS, then QUIT's one-second grace) by this much: a slot is never
 * taken from a live session by expiry, and a holder killed (SIGKILL) frees it within SMTP_TIMEOUT_MS + this.
 */
const LEASE_MARGIN_MS = 5000;
/** Redis answers within this or the attempt counts as unreachable (and the wait goes on, within the deadline). */
const COMMAND_TIMEOUT_MS = 1000;

/** Per process without Redis; with it, the per-address slots and the verdicts on Redis (SMTP_MAX_SESSIONS stays per process). */
export async function createSmtpShared(config: SmtpSharedConfig, logger: Logger): Promise<SmtpShared> {
  const local = createLocalVerdictCache();
  if (!config.redisUrl) {
    return { slots: createSessionSlots(config.smtpMaxPerHost, config.smtpMaxSessions), verdicts: local, close: async () => undefined };
  }
  const [{ createRedisClient, closeClient }, { createRedisAddressSlots }, { createRedisVerdictCache }] = await Promise.all([
    import('../../adapters/redis/redis-client.js'),
    import('../../adapters/smtp/redis-address-slots.js'),
    import('../../adapters/smtp/redis-verdict-cache.js'),
  ]);
  const onError = (err: Error): void => logger.debug({ err: err.message }, 'redis error (SMTP limits and verdicts)');
  const client = createRedisClient(config.redisUrl, { commandTimeoutMs: COMMAND_TIMEOUT_MS, onError });
  const shared = createRedisAddressSlots(client, { perAddress: config.smtpMaxPerHost, leaseMs: config.smtpTimeoutMs + LEASE_MARGIN_MS });
  return {
    slots: createSessionSlots(config.smtpMaxPerHost, config.smtpMaxSessions, shared),
    verdicts: createRedisVerdictCache(client, local, { onError }),
    close: () => closeClient(client),
  };
}
