// The SMTP verdict cache shared by every process through Redis (docs/adr/0033-shared-smtp-limits.md), an in-process
// LRU in front. Keys are HMAC-SHA256 of the address under a per-deployment secret: never an address in a key.
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Deliverability } from '../../domain/smtp-reply.js';
import type { LocalVerdictCache, VerdictCache } from './verdict-cache.js';

export interface RedisVerdictCacheOptions {
  keyPrefix?: string;
  /** Failed Redis reads and writes (the cache is skipped: a miss, a verdict not shared); never carries a key. */
  onError?: (err: Error) => void;
}

/**
 * The deployment's secret, made once by whichever process comes first (SET NX) and read by all: without it a key
 * name (seen in SCAN, MONITOR, a slow log, a memory report) could be matched against a list of candidate addresses,
 * as a plain SHA-256 of the address can.
 */
function secretOf(client: Redis, key: string): () => Promise<KeyObject> {
  let secret: Promise<KeyObject> | null = null;
  return () =>
    (secret ??= (async () => {
      await client.set(key, randomBytes(32).toString('hex'), 'NX');
      const hex = await client.get(key);
      if (hex === null) throw new Error('the verdict cache secret vanished');
      // A KeyObject, made once: Node 24 prepares a Buffer key again for every HMAC (8 us against 1.5 per key name).
      return createSecretKey(Buffer.from(hex, 'hex'));
    })().catch((err: unknown) => {
      secret = null; // asked again next time: Redis may be back
      throw err;
    }));
}

/** A kept verdict and when it ends (epoch ms): a process reading it keeps it in front only for the time it has left. */
type Stored = [expiresAt: number, verdict: Deliverability];

export function createRedisVerdictCache(client: Redis, local: LocalVerdictCache, o: RedisVerdictCacheOptions = {}): VerdictCache {
  const prefix = `${o.keyPrefix ?? 'vls:'}smtp:verdict:`;
  const secret = secretOf(client, `${prefix}secret`);
  const keyOf = (key: KeyObject, domain: string, user: string): string => prefix + createHmac('sha256', key).update(`${user}@${domain}`).digest('base64url');
  const failed = (err: unknown): void => o.onError?.(err instanceof Error ? err : new Error(String(err)));
  return {
    async get(domain, users) {
      const found = await local.get(domain, users);
      const missing = users.filter((u) => !found.has(u));
      if (missing.length === 0) return found;
      try {
        const key = await secret();
        const values = await client.mget(missing.map((u) => keyOf(key, domain, u)));
        const now = Date.now();
        missing.forEach((u, i) => {
          if (values[i] === null) return;
          const [expiresAt, d] = JSON.parse(values[i]!) as Stored;
          if (expiresAt <= now) return;
          found.set(u, d);
          local.keep(domain, u, d, expiresAt - now);
        });
      } catch (err) {
        failed(err); // Redis unreachable: the verifier asks the server, as it would on a miss
      }
      return found;
    },
    set(domain, verdicts, ttlMs) {
      local.set(domain, verdicts, ttlMs);
      void (async () => {
        const key = await secret();
        const now = Date.now();
        const batch = client.pipeline();
        for (const [u, d] of verdicts) batch.set(keyOf(key, domain, u), JSON.stringify([now + ttlMs(d), d] satisfies Stored), 'PX', Math.max(1, Math.round(ttlMs(d))));
        await batch.exec();
      })().catch(failed);
    },
    size: () => local.size(),
  };
}
