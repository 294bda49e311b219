// Why not RateLimiterUnion (docs/adr/0013): admitted counts and cost of three ways to count minute, day and month on Redis.
//
//   node --import tsx bench/limits-union.ts        (needs redis-server; LIMITS_UNION_ROUNDS, default 10)
//
// Two "instances" (each its own ioredis connection) share a key; 300 parallel requests spread over both, against
// 10 per minute, 10 per day or 10 per month in turn (the other windows 60/minute, 1000/day, 5000/month). Ways:
// - service: this service's limiter (src/accounts/limiter.ts): the three counts at once, all rewarded on a refusal;
// - union: RateLimiterUnion of three RateLimiterRedis, as documented (no refund);
// - union+reward: the same, rewarding the windows that counted a refused request.
// Then the cost per admitted request, one connection, far from every limit (sequential awaits: latency-bound).
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterUnion } from 'rate-limiter-flexible';
import { createLimiter, type LimitValues } from '../src/accounts/limiter.js';
import { createRedisCounters } from '../src/adapters/limits/redis-counters.js';
import { startRedis } from './fixtures.js';

const ROUNDS = Number(process.env.LIMITS_UNION_ROUNDS ?? 10);
const redis = await startRedis();
const clients = [new Redis(redis.url), new Redis(redis.url)];
await Promise.all(clients.map((c) => c.ping()));
// Each way below makes its limiters anew on the same two connections.
for (const c of clients) c.setMaxListeners(0);
let n = 0;

type Way = (limits: LimitValues) => { consume: (instance: number) => Promise<boolean>; used: () => Promise<number[]> };

const service: Way = (limits) => {
  const prefix = `o${n++}`;
  const limiters = clients.map((client) => createLimiter({ defaults: limits, counters: createRedisCounters({ client, keyPrefix: prefix }) }));
  const key = { id: 'key_x', name: 'x', status: 'active', perMinute: null, perDay: null, perMonth: null, createdAt: '' } as never;
  return {
    consume: (i) => limiters[i].consume(key).then(() => true, () => false),
    used: async () => {
      const { usage } = await limiters[0].peek(key);
      return [usage.minute.used, usage.day.used, usage.month.used];
    },
  };
};

function union(reward: boolean): Way {
  return (limits) => {
    const prefix = `u${n++}`;
    const make = (client: Redis) => {
      const ls = [
        new RateLimiterRedis({ storeClient: client, keyPrefix: `${prefix}m`, points: limits.perMinute, duration: 60 }),
        new RateLimiterRedis({ storeClient: client, keyPrefix: `${prefix}d`, points: limits.perDay, duration: 86400 }),
        new RateLimiterRedis({ storeClient: client, keyPrefix: `${prefix}mo`, points: limits.perMonth, duration: 31 * 86400 }),
      ];
      return { ls, union: new RateLimiterUnion(...ls) };
    };
    const inst = clients.map(make);
    return {
      async consume(i) {
        try {
          await inst[i].union.consume('k');
          return true;
        } catch (refused) {
          // Rejected with the refusing limiters' results only; every limiter counted the request.
          if (reward) await Promise.all(inst[i].ls.map((l) => l.reward('k')));
          return refused === null;
        }
      },
      used: async () => Promise.all(inst[0].ls.map(async (l) => (await l.get('k'))?.consumedPoints ?? 0)),
    };
  };
}

const WAYS: Record<string, Way> = { service, union: union(false), 'union+reward': union(true) };
const CASES: Record<string, LimitValues> = {
  '10/minute': { perMinute: 10, perDay: 1000, perMonth: 5000 },
  '10/day': { perMinute: 60, perDay: 10, perMonth: 5000 },
  '10/month': { perMinute: 60, perDay: 1000, perMonth: 10 },
};

for (const [name, way] of Object.entries(WAYS)) {
  for (const [label, limits] of Object.entries(CASES)) {
    const admitted: number[] = [];
    let used: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const w = way(limits);
      const ok = await Promise.all(Array.from({ length: 300 }, (_, i) => w.consume(i % 2)));
      admitted.push(ok.filter(Boolean).length);
      used = await w.used();
    }
    process.stdout.write(`${name.padEnd(13)} ${label.padEnd(10)} admitted per round: ${admitted.join(' ')}; counted after the last (minute/day/month): ${used.join('/')}\n`);
  }
}

const FAR = { perMinute: 1e9, perDay: 1e12, perMonth: 1e12 };
for (const [name, way] of Object.entries(WAYS)) {
  const w = way(FAR);
  for (let i = 0; i < 500; i++) await w.consume(0);
  const count = 5000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await w.consume(0);
  const seq = Number(process.hrtime.bigint() - t0) / 1000 / count;
  const t1 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: count }, (_, i) => w.consume(i % 2)));
  const par = Number(process.hrtime.bigint() - t1) / 1000 / count;
  process.stdout.write(`${name.padEnd(13)} ${seq.toFixed(0)} us per request one at a time; ${par.toFixed(1)} us per request with ${count} in flight\n`);
}

for (const c of clients) c.disconnect();
await redis.stop();
process.exit(0);
