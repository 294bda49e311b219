// Redis connection for keys and counters (ioredis): fail fast instead of queueing, reconnect by itself.
import { Redis } from 'ioredis';

export interface RedisClientOptions {
  /** TCP connect timeout; default 1000 ms. */
  connectTimeoutMs?: number;
  /** Per-command timeout; default 500 ms: a request never waits longer on Redis. */
  commandTimeoutMs?: number;
  /** Upper bound of the reconnect back-off; default 1000 ms (recovery is noticed within about that). */
  reconnectMaxDelayMs?: number;
  /** Connection errors (repeated while Redis is down); never carries a key. */
  onError?: (err: Error) => void;
}

/**
 * A client that never hangs a request: no offline queue (a command while disconnected fails at once),
 * one retry per command, short timeouts; it keeps reconnecting in the background with capped back-off.
 */
export function createRedisClient(url: string, opts: RedisClientOptions = {}): Redis {
  const maxDelay = opts.reconnectMaxDelayMs ?? 1000;
  const client = connect(url, {
    enableOfflineQueue: false,
    // Commands issued in the same tick go out as one pipeline: one write per batch of requests, not per request.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    connectTimeout: opts.connectTimeoutMs ?? 1000,
    commandTimeout: opts.commandTimeoutMs ?? 500,
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times - 1, 10), maxDelay),
  });
  // Without a listener ioredis prints every failed reconnect attempt.
  client.on('error', (err: Error) => opts.onError?.(err));
  return client;
}

/** Resolves once the client is ready; rejects after timeoutMs (the client keeps trying). */
export function waitForReady(client: Redis, timeoutMs = 5000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onEnd = () => done(new Error('redis connection closed'));
    const timer = setTimeout(() => done(new Error(`redis not reachable within ${timeoutMs} ms`)), timeoutMs);
    client.on('ready', onReady);
    client.on('end', onEnd);
  });
}

/** Close politely when connected, at once otherwise. */
export async function closeClient(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // fall through
    }
  }
  client.disconnect();
}

/** A command's span attributes (OTel database semantic conventions): the command's name, never its arguments. */
export function redisAttributes(client: Redis, command: string): Record<string, string | number> {
  return {
    'db.system.name': 'redis',
    'db.operation.name': command,
    'db.namespace': String(client.options.db ?? 0),
    'server.address': client.options.host ?? 'localhost',
    'server.port': client.options.port ?? 6379,
  };
}

/**
 * Where Redis is: a redis:// or rediss:// URL (ioredis reads it), or the Sentinel target config.ts writes
 * (`redis-sentinel://host:port,.../name`): ioredis asks the Sentinels for the primary, and again after a failover
 * (failoverDetector: it follows +switch-master at once rather than at the next connection error).
 */
function connect(url: string, options: Record<string, unknown>): Redis {
  const sentinel = /^redis-sentinel:\/\/([^/]+)\/(.+)$/.exec(url);
  if (!sentinel) return new Redis(url, options);
  const sentinels = sentinel[1].split(',').map((hp) => {
    const m = /^\[?(.*?)\]?:(\d+)$/.exec(hp)!;
    return { host: m[1], port: Number(m[2]) };
  });
  return new Redis({ sentinels, name: decodeURIComponent(sentinel[2]), failoverDetector: true, sentinelRetryStrategy: (times: number) => Math.min(100 * times, 1000), ...options });
}

/**
 * A connection of REDIS_URL for a library that takes one (BullMQ): `blocking` for a worker's (BullMQ's blocking
 * commands need maxRetriesPerRequest null; it makes its own duplicate for them), else failing fast like createRedisClient.
 */
export function createLibraryConnection(url: string, blocking: boolean, onError?: (err: Error) => void): Redis {
  const client = connect(url, {
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times - 1, 10), 1000),
    ...(blocking ? { maxRetriesPerRequest: null } : { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 1000 }),
  });
  client.on('error', (err: Error) => onError?.(err));
  return client;
}
