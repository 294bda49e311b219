// SMTP session slots per server address shared by every process through Redis (docs/adr/0033-shared-smtp-limits.md):
// a sorted set per dialled address whose members are leases scored by their expiry, taken by one atomic script.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SlotsUnavailableError, type SharedAddressSlots } from './host-slots.js';

/**
 * KEYS[1] the address's set; ARGV: member, limit, lease (ms). Redis's own clock (TIME) scores the leases, so processes
 * on machines whose clocks disagree still agree on expiry. Expired leases (a holder killed) are dropped first; a member
 * already present (an earlier attempt whose answer was lost) is renewed rather than counted twice.
 */
const TAKE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`;

type TakeScript = (key: string, member: string, limit: number, leaseMs: number) => Promise<number>;

export interface RedisAddressSlotsOptions {
  /** SMTP_MAX_PER_HOST: sessions to one address across every process. */
  perAddress: number;
  /** How long a slot is held at most: longer than a session can last, so a killed holder's slot frees itself. */
  leaseMs: number;
  keyPrefix?: string;
}

/** The longest pause between two attempts at a full address: a waiter notices a freed slot within about this. */
const MAX_BACKOFF_MS = 250;

/** A pause of up to `ms` (full jitter: waiters of several processes do not ask in step); false when `signal` aborted. */
function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', gone);
      resolve(ok);
    };
    const gone = (): void => done(false);
    const timer = setTimeout(() => done(true), 1 + Math.random() * ms);
    signal?.addEventListener('abort', gone, { once: true });
  });
}

export function createRedisAddressSlots(client: Redis, o: RedisAddressSlotsOptions): SharedAddressSlots {
  client.defineCommand('vlsSmtpSlotTake', { numberOfKeys: 1, lua: TAKE_LUA });
  const take = (client as unknown as Record<string, TakeScript>).vlsSmtpSlotTake.bind(client);
  const prefix = `${o.keyPrefix ?? 'vls:'}smtp:slots:`;
  const owner = randomBytes(8).toString('hex');
  let taken = 0;
  return {
    async take(address, signal) {
      const key = prefix + address;
      const member = `${owner}:${++taken}`;
      let unreachable = false;
      for (let attempt = 0; ; attempt++) {
        if (signal?.aborted) break;
        try {
          if ((await take(key, member, o.perAddress, o.leaseMs)) === 1) {
            // A release lost with Redis leaves the lease to expire: the limit is never exceeded, a slot idles a while.
            return () => void client.zrem(key, member).catch(() => undefined);
          }
          unreachable = false;
        } catch {
          unreachable = true; // a blip (a failover) is waited out like a full address, within the same deadline
        }
        if (!(await pause(Math.min(MAX_BACKOFF_MS, 10 * 2 ** attempt), signal))) break;
      }
      void client.zrem(key, member).catch(() => undefined); // an attempt whose answer was lost may have taken it
      throw unreachable ? new SlotsUnavailableError('the shared SMTP session limits (Redis) were unreachable') : signal!.reason;
    },
  };
}
