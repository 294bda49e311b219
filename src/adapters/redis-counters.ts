// Shared usage counters on Redis: minute, day and month checked and counted atomically by one Lua script.
//
// Every instance on the same Redis enforces one limit. CONSUME_LUA (redis-scripts.ts) grants as many of a
// batch's requests as every window still has room for, counting nothing for the rest. Requests for the same
// key arriving within one turn of the event loop form one batch; the outcome is exactly that of running
// them one by one in arrival order (the first `granted` counted, the rest refused, consuming nothing). Far
// from every limit a grant also reserves units ahead (redis-reserves.ts), and the following requests are
// admitted from them without waiting for Redis; close to a limit nothing is
// reserved, so there every request is decided in Redis, and a refusal that only other instances' reserves
// cause says so (TakeResult.retryMs: they come back within RESERVE_RETURN_MS when unused). The minute
// counter is a fixed 60 s window (PEXPIRE on its first increment, like rate-limiter-flexible's
// RateLimiterRedis); day and month counters expire an hour after their window. Keys: `<prefix>{key_id}:m`,
// `<prefix>{key_id}:d:2026-11-22`, `<prefix>{key_id}:m:2026-11` and the reserve ledger
// `<prefix>{key_id}:m:reserves` (the braces are a Redis Cluster hash tag: one API key's keys share a slot).
//
// Redis unreachable (connection lost, command timeout): requests keep being answered.
// - per minute: an in-memory insurance limiter (rate-limiter-flexible RateLimiterMemory) per instance, so
//   N instances may admit up to N times the limit while degraded;
// - day/month: counted locally on top of the last values this instance saw in Redis; the local increments
//   are added to Redis (INCRBY) when the connection returns, so an outage never hands a fresh quota to a
//   key this instance has served (a key it had not seen starts from 0 locally);
// - reserves retired meanwhile are released once Redis answers again (RELEASE_LUA acts once per reserve);
// - a Redis that hangs instead of closing: every script carries a deadline shortly before the command
//   timeout and counts nothing when run past it, so requests this instance counted itself are not counted
//   twice when Redis catches up (clock offset to Redis measured on each connect and each minute); every call
//   has our own timeout, which lets an answer already on the socket win over a timer that came due meanwhile;
// - healthy() is false (GET /readyz reports it); the client reconnects in the background and healthy()
//   turns true again once Redis answers and the local increments are merged.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { MINUTE_MS, type CounterStore, type LimitWindows, type TakeResult, type UsageCounts } from './counter-store.js';
import { LocalCounters, createMinuteLimiter, readLocally, takeLocally } from './local-counters.js';
import { closeClient, createRedisClient, waitForReady, type RedisClientOptions } from './redis-client.js';
import { RESERVE_DIVISOR, RESERVE_IDLE_MS, RESERVE_MAX, RESERVE_RETURN_MS, Reserves, type Reserve } from './redis-reserves.js';
import { CONSUME_LUA, MERGE_LUA, READ_LUA, RELEASE_LUA, grantOf, minuteState, resultOf, windowsId, type Grant } from './redis-scripts.js';

/** Calendar counters are kept an hour past their window, then Redis drops them. */
const GRACE_SECONDS = 3600;
/** Releases waiting for Redis to come back, at most (beyond, units stay counted: never more than a limit admitted). */
const MAX_PENDING_RELEASES = 10_000;

/** How much longer than our own timeout the client's timeout runs (it must not fire first). */
const GRACE_BACKSTOP_MS = 1000;

/**
 * `p`, or a rejection after `ms`. The rejection waits one turn of the event loop after the timer: an answer
 * already on the socket (the process was busy when the timer came due) is read first and wins, instead of
 * the request being counted here as well as in Redis.
 */
function withGrace<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => setImmediate(() => reject(new Error(`redis did not answer within ${ms} ms`))), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** A script that ran past its deadline counted nothing; the caller counts locally, as for a timeout. */
class TooLate extends Error {
  constructor() {
    super('redis ran the script past its deadline');
  }
}

export interface RedisCountersOptions extends RedisClientOptions {
  /** REDIS_URL; ignored when `client` is given. */
  url?: string;
  /** An existing client (not closed by close()). */
  client?: Redis;
  /** Prefix of every Redis key; default `vls:`. */
  keyPrefix?: string;
  /** Length of the "minute" window in Redis; default 60 s, at least 2 s (tests shorten it to cross windows quickly). */
  minuteMs?: number;
  /** Clock for pruning the local fallback state; default Date.now. */
  now?: () => number;
  logger?: { warn: (obj: object, msg?: string) => void };
}

export interface RedisCounterStore extends CounterStore {
  /** Resolves when connected (rejects after timeoutMs; counting works meanwhile, degraded). */
  ready(timeoutMs?: number): Promise<void>;
}

type Script = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;
type NumberScript = (numKeys: number, ...args: (string | number)[]) => Promise<number>;

/** Requests for the same windows and limits waiting for one script run. */
interface Batch {
  w: LimitWindows;
  waiters: Array<(r: TakeResult) => void>;
}

export function createRedisCounters(opts: RedisCountersOptions): RedisCounterStore {
  if (!opts.client && !opts.url) throw new Error('createRedisCounters needs a url or a client');
  const owned = !opts.client;
  const timeoutMs = opts.commandTimeoutMs ?? 500;
  // The client's own timeout is only a backstop: every call goes through withGrace() below.
  const client = opts.client ?? createRedisClient(opts.url!, { ...opts, commandTimeoutMs: timeoutMs + GRACE_BACKSTOP_MS });
  const prefix = opts.keyPrefix ?? 'vls:';
  const now = opts.now ?? Date.now;
  const minuteMs = opts.minuteMs ?? MINUTE_MS;
  // Window ends less than a second apart count as one window (clock and round-trip slack): windows must be longer.
  if (minuteMs < 2000) throw new Error('createRedisCounters: minuteMs must be at least 2000');
  client.defineCommand('vlsConsume', { lua: CONSUME_LUA });
  client.defineCommand('vlsUsage', { lua: READ_LUA });
  client.defineCommand('vlsRelease', { lua: RELEASE_LUA });
  client.defineCommand('vlsMerge', { lua: MERGE_LUA });
  const scripts = client as unknown as { vlsConsume: Script; vlsUsage: Script; vlsRelease: NumberScript; vlsMerge: NumberScript };

  // A script runs only until shortly before this instance stops waiting for it (Redis clock: `skew` is
  // measured on each connect), so a late run never counts what the instance has counted itself meanwhile.
  const slackMs = Math.min(100, timeoutMs / 5);
  let skew = 0;
  const deadline = (): number => Date.now() + skew + timeoutMs - slackMs;
  async function measureSkew(): Promise<void> {
    const [s, us] = await withGrace(client.time(), timeoutMs);
    // Against the time the answer arrived: errs towards an earlier deadline, never a later one.
    skew = Number(s) * 1000 + Math.floor(Number(us) / 1000) - Date.now();
  }

  const insurance = createMinuteLimiter();
  const local = new LocalCounters();
  let ok = false;
  let merging: Promise<void> | null = null;
  /** Requests were counted here while Redis did not answer: merge() has increments to add. */
  let unmerged = false;
  let countedAlone = 0;
  const countLocally = (w: LimitWindows): Promise<TakeResult> => {
    unmerged = true;
    countedAlone++;
    return takeLocally(insurance, local, w);
  };

  const failed = (err: unknown): void => {
    if (ok) opts.logger?.warn({ err: String(err) }, 'redis unreachable: limits counted locally');
    ok = false;
  };

  /** Add the increments counted while degraded to Redis, then send the releases that waited; failures stay pending. */
  async function merge(): Promise<void> {
    await measureSkew();
    unmerged = false;
    const batch = local.drain();
    const until = deadline();
    const done = await Promise.allSettled(
      batch.map((p) => withGrace(scripts.vlsMerge(1, prefix + p.key, p.n, Math.ceil(p.expiresAt / 1000) + GRACE_SECONDS, until), timeoutMs)),
    );
    const failedIncrements = batch.filter((_, i) => done[i].status === 'rejected' || (done[i] as PromiseFulfilledResult<number>).value !== 1);
    local.restore(failedIncrements);
    if (failedIncrements.length > 0) {
      unmerged = true;
      throw new Error('redis did not take the increments counted while it was unreachable');
    }
    await sendReleases();
  }

  const onReady = (): void => {
    merging ??= merge()
      .then(() => {
        ok = true;
      }, failed)
      .finally(() => {
        merging = null;
      });
  };
  /**
   * Redis answers again after timeouts that did not drop the connection (no 'ready' event): add what was
   * counted here meanwhile, while requests keep going to Redis (a reconnect instead holds them until merged).
   */
  let catchingUp = false;
  const catchUp = (): void => {
    if (catchingUp || merging !== null) return;
    catchingUp = true;
    merge()
      .catch(failed)
      .finally(() => {
        catchingUp = false;
      });
  };
  const onClose = (): void => failed(new Error('redis connection closed'));
  client.on('ready', onReady);
  client.on('close', onClose);
  if (client.status === 'ready') onReady();

  /** The counters, then the key's reserve ledger. */
  const keysOf = (w: LimitWindows): string[] => [prefix + w.minute.key, ...w.calendar.map((c) => prefix + c.key), `${prefix}${w.minute.key}:reserves`];
  let closing = false;

  /** Script calls in flight, awaited by close() so that no reserved unit is left behind. */
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    return p.finally(() => inFlight.delete(p));
  };

  /**
   * Unused reserved units back to Redis. The release script acts once per reserve, so one that failed, timed
   * out or could not be sent is simply sent again once Redis answers (and does nothing if Redis lost its data).
   */
  interface Release {
    keys: string[];
    gen: string;
    used: number;
  }
  let releases: Release[] = [];
  const sendRelease = (rel: Release): void => {
    if (client.status !== 'ready') {
      if (releases.length < MAX_PENDING_RELEASES) releases.push(rel);
      return;
    }
    track(withGrace(scripts.vlsRelease(rel.keys.length, ...rel.keys, rel.gen, rel.used), timeoutMs)).catch((err: unknown) => {
      if (releases.length < MAX_PENDING_RELEASES) releases.push(rel);
      failed(err);
    });
  };
  async function sendReleases(): Promise<void> {
    const waiting = releases;
    releases = [];
    for (const rel of waiting) sendRelease(rel);
    await Promise.allSettled([...inFlight]);
  }
  const reserves = new Reserves(randomBytes(6).toString('base64url'), (r: Reserve) => sendRelease({ keys: keysOf(r.w), gen: r.gen, used: r.used }));

  /**
   * One script call for `want` requests of these windows (0: a top-up), reserving ahead where there is room.
   * Tracked whole, so close() waits for the bookkeeping after the answer too, not only for the script.
   */
  const consume = (w: LimitWindows, want: number): Promise<Grant> => track(consumeOnce(w, want));
  async function consumeOnce(w: LimitWindows, want: number): Promise<Grant> {
    const id = windowsId(w);
    const sentAt = now();
    const r = reserves.open(id, w, sentAt);
    const report = reserves.sent(r);
    const args: (string | number)[] = keysOf(w);
    args.push(w.minute.limit, minuteMs);
    for (const c of w.calendar) args.push(c.limit);
    for (const c of w.calendar) args.push(Math.ceil(c.expiresAt / 1000) + GRACE_SECONDS);
    args.push(want, closing ? 0 : RESERVE_MAX, RESERVE_DIVISOR, r.gen, report, deadline());
    let g: Grant;
    try {
      const reply = await withGrace(scripts.vlsConsume(w.calendar.length + 2, ...args), timeoutMs);
      if (reply[0] === -1) throw new TooLate();
      g = grantOf(reply);
    } catch (err) {
      reserves.answered(id, r, null, sentAt);
      // Past the deadline although Redis answered in time: a clock stepped since it was compared; compare again.
      if (err instanceof TooLate) measureSkew().catch(failed);
      throw err;
    }
    for (let i = 0; i < w.calendar.length; i++) local.observe(w.calendar[i].key, g.after[i], w.calendar[i].expiresAt);
    // The in-memory fallback carries on from Redis' minute count, not from zero, if Redis stops answering.
    if (g.pttl > 0) void insurance.set(w.minute.key, g.minuteAfter, g.pttl / 1000);
    ok = true;
    reserves.answered(id, r, g, sentAt);
    if (unmerged || releases.length > 0) catchUp();
    return g;
  }

  function refill(r: Reserve): void {
    consume(r.w, 0)
      .catch(failed)
      .finally(() => {
        r.refilling = false;
        reserves.retireIfSpent(windowsId(r.w), r);
      });
  }

  const pending = new Map<string, Batch>();

  function flush(): void {
    const batches = [...pending.values()];
    pending.clear();
    for (const b of batches) void run(b);
  }

  async function run({ w, waiters }: Batch): Promise<void> {
    let g: Grant;
    try {
      g = await consume(w, waiters.length);
    } catch (err) {
      failed(err);
      for (const resolve of waiters) resolve(await countLocally(w));
      return;
    }
    // Units reserved meanwhile (a top-up that answered first) serve requests Redis had no more room for.
    const id = windowsId(w);
    waiters.forEach((resolve, i) => {
      const fromReserve = i >= g.granted ? reserves.use(id, now(), refill) : null;
      resolve(fromReserve ?? resultOf(w, i, g, reserves.unitsOf(id), RESERVE_RETURN_MS));
    });
  }

  const sweep = setInterval(() => {
    reserves.sweep(now() - RESERVE_IDLE_MS);
    // Counted here during a hang and no request since to notice that Redis answers again: try now.
    if ((unmerged || releases.length > 0) && client.status === 'ready') catchUp();
  }, RESERVE_IDLE_MS);
  sweep.unref();
  const prune = setInterval(() => {
    local.prune(now() - GRACE_SECONDS * 1000);
    if (client.status === 'ready') measureSkew().catch(failed);
  }, 60_000);
  prune.unref();

  return {
    take(w: LimitWindows): Promise<TakeResult> {
      if (client.status !== 'ready' || merging !== null) {
        ok = false;
        return countLocally(w);
      }
      const id = windowsId(w);
      const reserved = reserves.use(id, now(), refill);
      if (reserved) return Promise.resolve(reserved);
      let batch = pending.get(id);
      if (!batch) {
        batch = { w, waiters: [] };
        pending.set(id, batch);
        if (pending.size === 1) setImmediate(flush);
      }
      const waiters = batch.waiters;
      return new Promise((resolve) => waiters.push(resolve));
    },
    async read(minuteKey, keys): Promise<UsageCounts> {
      if (client.status === 'ready') {
        try {
          const [pttl, minuteUsed, ...counts] = await withGrace(
            scripts.vlsUsage(keys.length + 1, prefix + minuteKey, ...keys.map((k) => prefix + k)),
            timeoutMs,
          );
          // This instance's unused reserved units are not usage yet.
          const [minuteHeld, ...held] = reserves.held(minuteKey, keys, now() + pttl);
          return { minute: minuteState(pttl, minuteUsed - minuteHeld), counts: counts.map((c, i) => c - held[i]) };
        } catch (err) {
          failed(err);
        }
      }
      return readLocally(insurance, local, minuteKey, keys);
    },
    healthy: () => ok && client.status === 'ready',
    countedAlone: () => countedAlone,
    ready: (timeoutMs) => waitForReady(client, timeoutMs),
    async close() {
      clearInterval(prune);
      clearInterval(sweep);
      // No more reserving; wait for grants in flight, then give every unused unit back.
      closing = true;
      await Promise.allSettled([...inFlight]);
      // What was counted here alone goes to Redis too, if it answers (otherwise it is lost with the process).
      if (unmerged && client.status === 'ready') await merge().catch(failed);
      reserves.sweep();
      await sendReleases();
      client.off('ready', onReady);
      client.off('close', onClose);
      if (owned) await closeClient(client);
    },
  };
}
