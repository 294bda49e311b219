// WORKERS=N on the embedded store: rate-limiter-flexible RateLimiterCluster, the primary holds (and persists) the counters.
//
// Workers ask the primary over node:cluster IPC (RateLimiterCluster); the primary's RateLimiterClusterMaster
// counts in the limiters registered here under the same key prefixes: the per-minute RateLimiterMemory and the
// calendar counters, which the primary writes to SQLite as a single process does (src/adapters/limits/sqlite-counters.ts).
import { RateLimiterCluster, RateLimiterClusterMaster, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { MINUTE_SECONDS, UNBOUNDED_POINTS, type CounterStore } from './counter-store.js';
import { CalendarLimiter, createMinuteLimiter } from './local-counters.js';
import { persistCalendar, type PersistedCalendar, type PersistOptions } from './sqlite-counters.js';

const MINUTE_PREFIX = 'vls-minute';
const CALENDAR_PREFIX = 'vls-calendar';

/** How long a worker waits for the primary's answer before the request answers 503. */
const IPC_TIMEOUT_MS = 2000;

/** A worker's counters: every count is a message to the primary. */
export function createClusterCounters(): CounterStore {
  const opts = { points: UNBOUNDED_POINTS, duration: MINUTE_SECONDS, timeoutMs: IPC_TIMEOUT_MS };
  return {
    minute: new RateLimiterCluster({ ...opts, keyPrefix: MINUTE_PREFIX }),
    calendar: new RateLimiterCluster({ ...opts, keyPrefix: CALENDAR_PREFIX }),
    healthy: () => true,
    close: async () => {},
  };
}

/**
 * The master keeps its limiters in `_rateLimiters` by key prefix and creates a RateLimiterMemory for a prefix a
 * worker announces only when none is there: registering ours first makes it count in limiters this process can
 * persist. Checked by test/contract/cluster.test.ts (a restart of WORKERS=2 keeps the daily count).
 */
interface MasterInternals {
  _rateLimiters: Record<string, RateLimiterAbstract>;
}

/** In the primary, before forking: count for the workers and persist the calendar counters in `db`. */
export function startClusterPrimary(opts: PersistOptions): PersistedCalendar {
  const master = new RateLimiterClusterMaster() as unknown as MasterInternals;
  if (typeof master._rateLimiters !== 'object' || master._rateLimiters === null) {
    throw new Error('rate-limiter-flexible: RateLimiterClusterMaster no longer keeps _rateLimiters; cannot persist calendar counters');
  }
  const calendar = new CalendarLimiter(CALENDAR_PREFIX);
  master._rateLimiters[MINUTE_PREFIX] = createMinuteLimiter(MINUTE_PREFIX);
  master._rateLimiters[CALENDAR_PREFIX] = calendar;
  return persistCalendar(calendar, opts);
}
