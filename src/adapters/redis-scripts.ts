// Lua scripts of the Redis counters (atomic per call) and the pure arithmetic around their replies.
import { MINUTE_MS, type LimitWindows, type MinuteState, type TakeResult } from './counter-store.js';

/**
 * Count a batch of requests, and reserve more ahead when far from every limit.
 * KEYS: minute counter, then n calendar counters. ARGV: minute limit, window ms, n calendar limits,
 * n EXPIREAT seconds, requests wanted, most units to reserve, reserve divisor.
 * Grants min(wanted, room) where room is the least headroom of all windows, then reserves
 * min(most, floor(remaining room / divisor)): none when close to a limit, so counting is exact there.
 * Every counter grows by granted + reserved. Returns {granted, reserved, minute pttl, minute count, counts...},
 * the counts after the increments.
 */
export const CONSUME_LUA = `
local n = #KEYS
local counts = {}
for i = 1, n do counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0') end
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then
  counts[1] = 0
  redis.call('DEL', KEYS[1])
end
local room = tonumber(ARGV[1]) - counts[1]
for i = 2, n do
  local r = tonumber(ARGV[i + 1]) - counts[i]
  if r < room then room = r end
end
if room < 0 then room = 0 end
local granted = math.min(tonumber(ARGV[2 * n + 1]), room)
local reserved = math.min(tonumber(ARGV[2 * n + 2]), math.floor((room - granted) / tonumber(ARGV[2 * n + 3])))
local take = granted + reserved
if take > 0 then
  counts[1] = redis.call('INCRBY', KEYS[1], take)
  if pttl < 0 then
    pttl = tonumber(ARGV[2])
    redis.call('PEXPIRE', KEYS[1], pttl)
  end
  for i = 2, n do
    counts[i] = redis.call('INCRBY', KEYS[i], take)
    redis.call('EXPIREAT', KEYS[i], ARGV[n + i])
  end
end
local out = {granted, reserved, pttl}
for i = 1, n do out[i + 3] = counts[i] end
return out
`;

/**
 * Give back unused reserved units. KEYS: minute counter, then calendar counters. ARGV: units, the minute
 * window's expected remaining ms. The minute counter is decremented only when it is still the window the
 * units were reserved in (its PTTL within a second of the expected one): a new window must not lose counts.
 * Never below zero; a counter that expired meanwhile is left alone.
 */
export const RELEASE_LUA = `
local units = tonumber(ARGV[1])
local function release(key)
  local v = tonumber(redis.call('GET', key) or '0')
  local d = math.min(units, v)
  if d > 0 then redis.call('DECRBY', key, d) end
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl > 0 and math.abs(pttl - tonumber(ARGV[2])) < 1000 then release(KEYS[1]) end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then release(KEYS[i]) end
end
return 1
`;

/** KEYS: minute counter, then calendar counters. Returns {minute pttl, minute count, counts...}. */
export const READ_LUA = `
local out = {redis.call('PTTL', KEYS[1])}
for i = 1, #KEYS do out[i + 1] = tonumber(redis.call('GET', KEYS[i]) or '0') end
return out
`;

export const minuteState = (pttl: number, used: number): MinuteState =>
  pttl > 0 ? { used, resetMs: pttl } : { used: 0, resetMs: MINUTE_MS };

/** Ids already built, per windows object: the limiter hands the same object for a key all day. */
const ids = new WeakMap<LimitWindows, string>();

/** Requests share a batch (and a reserve) only when every counter key and limit is the same. */
export function windowsId(w: LimitWindows): string {
  let id = ids.get(w);
  if (id === undefined) {
    id = `${w.minute.key} ${w.minute.limit}`;
    for (const c of w.calendar) id += ` ${c.key} ${c.limit}`;
    ids.set(w, id);
  }
  return id;
}

/**
 * The result of the i-th request (0-based) of a batch, as if the requests had run one by one, from the
 * counts in Redis after the call. `held` units are reserved by this instance and not used: they are in
 * those counts but are no one's requests, so the reported counts leave them out.
 */
export function resultOf(w: LimitWindows, i: number, granted: number, pttl: number, minuteAfter: number, after: number[], held: number): TakeResult {
  if (i < granted) {
    const back = granted - 1 - i + held;
    return { refused: -1, minute: minuteState(pttl, minuteAfter - back), counts: after.map((c) => c - back) };
  }
  // Refused requests count nothing: each sees the counts after the granted ones, and at least one window
  // is then full in Redis (otherwise the script would have granted it). The first full one, in order, refuses.
  let refused = 0;
  if (minuteAfter < w.minute.limit) {
    refused = 1 + w.calendar.findIndex((c, k) => after[k] >= c.limit);
  }
  return { refused, minute: minuteState(pttl, minuteAfter - held), counts: after.map((c) => c - held) };
}
