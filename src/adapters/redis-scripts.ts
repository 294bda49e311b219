// Lua scripts of the Redis counters (atomic per call) and the pure arithmetic around their replies.
import { MINUTE_MS, lastFull, type LimitWindows, type MinuteState, type TakeResult } from './counter-store.js';

/**
 * How long a ledger entry outlives its minute window: a release sent after an outage that long still gives
 * the units back to the calendar counters (entries of an instance that stopped go then).
 */
export const LEDGER_KEEP_MS = 3_600_000;
/**
 * A refusal counts on units held by entries whose window ended at most this long ago: a running instance
 * releases them within a couple of seconds; older ones belong to an instance that stopped or lost Redis.
 */
export const HELD_RECENT_MS = 5_000;

/**
 * Count a batch of requests, and reserve more ahead when far from every limit.
 * KEYS: minute counter, n - 1 calendar counters, the key's reserve ledger (a hash: one field per reserve,
 * `"<units reserved> <units used, as last reported> <minute window end ms>"`). ARGV: minute limit, window ms,
 * the calendar limits, their EXPIREAT seconds, requests wanted, most units to reserve, reserve divisor, the
 * reserve's id, units of it used so far (a running total: a report applied twice or late changes nothing),
 * the caller's deadline (Redis clock, ms).
 * Past the deadline it counts nothing and returns {-1}: the caller has given up waiting and counts the
 * requests itself, so a call that Redis runs late never counts them a second time.
 * Grants min(wanted, room) where room is the least headroom of all windows, then reserves
 * min(most, floor(remaining room / divisor)): none when close to a limit, so counting is exact there, and
 * none under a reserve id of an earlier minute window. Every counter grows by granted + reserved, and so does
 * the ledger entry's reserved total. When it grants less than wanted, it also sums the units
 * other reserves hold (in this minute window, and in the calendar windows: entries of windows that ended
 * more than HELD_RECENT_MS ago are not coming back soon), the refused requests' only hope.
 * Returns {granted, reserved, minute pttl, held elsewhere in the minute, held elsewhere in the calendar
 * windows, minute count, counts...}, the counts after the increments.
 */
export const CONSUME_LUA = `
local n = #KEYS - 1
local ledger = KEYS[n + 1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now > tonumber(ARGV[2 * n + 6]) then return {-1} end
local counts = {}
for i = 1, n do counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0') end
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then
  counts[1] = 0
  redis.call('DEL', KEYS[1])
end
local wend = now + (pttl >= 0 and pttl or tonumber(ARGV[2]))
local room = tonumber(ARGV[1]) - counts[1]
for i = 2, n do
  local r = tonumber(ARGV[i + 1]) - counts[i]
  if r < room then room = r end
end
if room < 0 then room = 0 end
local want = tonumber(ARGV[2 * n + 1])
local granted = math.min(want, room)
local reserved = math.min(tonumber(ARGV[2 * n + 2]), math.floor((room - granted) / tonumber(ARGV[2 * n + 3])))
local gen = ARGV[2 * n + 4]
local entry = redis.call('HGET', ledger, gen)
local total, used, ends = 0, 0, wend
if entry then
  local r, u, e = string.match(entry, '^(%d+) (%d+) (%d+)$')
  total, used, ends = tonumber(r), tonumber(u), tonumber(e)
  if math.abs(ends - wend) >= 1000 then reserved = 0 end
end
used = math.max(used, tonumber(ARGV[2 * n + 5]))
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
if entry or reserved > 0 then
  redis.call('HSET', ledger, gen, (total + reserved) .. ' ' .. used .. ' ' .. ends)
  redis.call('PEXPIRE', ledger, wend - now + ${LEDGER_KEEP_MS})
end
local minuteElsewhere, calendarElsewhere = 0, 0
if granted < want then
  local all = redis.call('HGETALL', ledger)
  for i = 1, #all, 2 do
    local r, u, e = string.match(all[i + 1], '^(%d+) (%d+) (%d+)$')
    local h = math.max(0, tonumber(r) - tonumber(u))
    e = tonumber(e)
    if all[i] == gen then
    elseif e + ${LEDGER_KEEP_MS} < now then redis.call('HDEL', ledger, all[i])
    elseif e + ${HELD_RECENT_MS} >= now then
      calendarElsewhere = calendarElsewhere + h
      if math.abs(e - wend) < 1000 then minuteElsewhere = minuteElsewhere + h end
    end
  end
end
local out = {granted, reserved, pttl, minuteElsewhere, calendarElsewhere}
for i = 1, n do out[i + 5] = counts[i] end
return out
`;

/**
 * Give back a reserve's unused units, once. KEYS: minute counter, calendar counters, the reserve ledger.
 * ARGV: the reserve's id, units of it used in all. Its ledger entry says how many units Redis counted for it
 * and in which minute window: the difference goes back, exactly (units of a call whose answer was lost
 * included). The entry is deleted, so running the script again gives back nothing, and a Redis that lost its
 * data (no entry) is not given back units it never counted; entries of stopped instances are pruned here.
 * The minute counter is decremented only when it is still the reserve's window: a new window must not lose
 * counts. Never below zero; a counter that expired meanwhile is left alone. Returns the units given back.
 */
export const RELEASE_LUA = `
local n = #KEYS - 1
local ledger = KEYS[n + 1]
local entry = redis.call('HGET', ledger, ARGV[1])
if not entry then return 0 end
redis.call('HDEL', ledger, ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', ledger)
for i = 1, #all, 2 do
  if tonumber(string.match(all[i + 1], '(%d+)$')) + ${LEDGER_KEEP_MS} < now then redis.call('HDEL', ledger, all[i]) end
end
local r, u, e = string.match(entry, '^(%d+) (%d+) (%d+)$')
local units = tonumber(r) - math.max(tonumber(u), tonumber(ARGV[2]))
if units <= 0 then return 0 end
local function release(key)
  local v = tonumber(redis.call('GET', key) or '0')
  local d = math.min(units, v)
  if d > 0 then redis.call('DECRBY', key, d) end
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl > 0 and math.abs(now + pttl - tonumber(e)) < 1000 then release(KEYS[1]) end
for i = 2, n do
  if redis.call('EXISTS', KEYS[i]) == 1 then release(KEYS[i]) end
end
return units
`;

/**
 * Add increments counted while Redis was unreachable, unless past the caller's deadline (then -1: the
 * caller keeps them for the next attempt, and a late run cannot add them twice).
 * KEYS: one calendar counter. ARGV: increment, EXPIREAT seconds, deadline (Redis clock, ms).
 */
export const MERGE_LUA = `
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[3]) then return -1 end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIREAT', KEYS[1], ARGV[2])
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

/** A CONSUME_LUA reply. */
export interface Grant {
  granted: number;
  reserved: number;
  pttl: number;
  /** Units other reserves hold in this minute window, and in the calendar windows (0 unless some were refused). */
  minuteElsewhere: number;
  calendarElsewhere: number;
  minuteAfter: number;
  after: number[];
}

export function grantOf(reply: number[]): Grant {
  const [granted, reserved, pttl, minuteElsewhere, calendarElsewhere, minuteAfter, ...after] = reply;
  return { granted, reserved, pttl, minuteElsewhere, calendarElsewhere, minuteAfter, after };
}

/** The window at its limit that ends last (i ≥ 1 calendar[i - 1], 0 minute); -1 when none is. */
function refusingWindow(w: LimitWindows, minute: number, counts: readonly number[]): number {
  const k = lastFull(w.calendar, counts);
  return k >= 0 ? k + 1 : minute >= w.minute.limit ? 0 : -1;
}

/**
 * The result of the i-th request (0-based) of a batch, as if the requests had run one by one, from the
 * counts in Redis after the call. `held` units are reserved by this instance and not used: they are in
 * those counts but are no one's requests, so the reported counts leave them out. A refusal that the units
 * other instances hold would lift carries `retryMs`: unused, they come back within that long.
 */
export function resultOf(w: LimitWindows, i: number, g: Grant, held: number, retryMs: number): TakeResult {
  if (i < g.granted) {
    const back = g.granted - 1 - i + held;
    return { refused: -1, minute: minuteState(g.pttl, g.minuteAfter - back), counts: g.after.map((c) => c - back) };
  }
  // Refused requests count nothing: each sees the counts after the granted ones, and at least one window
  // is then full in Redis (otherwise the script would have granted it). Of the windows still full once
  // other instances' reserves are back, the one that ends last refuses; with none, the refusal is temporary.
  const full = refusingWindow(w, g.minuteAfter, g.after);
  const lasting = refusingWindow(
    w,
    g.minuteAfter - g.minuteElsewhere,
    g.after.map((c) => c - g.calendarElsewhere),
  );
  const result: TakeResult = {
    refused: lasting >= 0 ? lasting : Math.max(0, full),
    minute: minuteState(g.pttl, g.minuteAfter - held),
    counts: g.after.map((c) => c - held),
  };
  if (lasting < 0) result.retryMs = retryMs;
  return result;
}
