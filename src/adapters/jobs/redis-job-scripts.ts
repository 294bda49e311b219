// The Lua scripts of the Redis job store (redis-job-store.ts): each step that must not interleave with another
// instance's runs in Redis as one script (EVAL is atomic). One Redis (or Sentinel's primary), not Redis Cluster.

/** Ends the job (KEYS meta, open zset, webhook zset; ARGV id, status, now): its webhook becomes due when it has one. */
const FINISH = `
local function finish(meta, open, hooks, id, status, now)
  redis.call('HSET', meta, 'status', status, 'finishedAt', now)
  redis.call('ZREM', open, id)
  if redis.call('HGET', meta, 'webhookUrl') ~= '' then redis.call('ZADD', hooks, now, id) end
end
`;

/**
 * One item's line, written once (HSETNX), and its copies' (repeated items); counted; the job ends with its last item.
 * KEYS meta, lines, copies, open, hooks; ARGV id, index, rest of the line (after `{"index":N,`), status, now.
 * Returns 1 when written, 0 when the job has ended or the line exists (another worker wrote it: it stays the one).
 */
export const SETTLE = `${FINISH}
local st = redis.call('HGET', KEYS[1], 'status')
if st ~= 'incoming' and st ~= 'queued' and st ~= 'running' then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[2], '{"index":' .. ARGV[2] .. ',' .. ARGV[3]) == 0 then return 0 end
local n = 1
local copies = redis.call('HGET', KEYS[3], ARGV[2])
if copies then
  for c in string.gmatch(copies, '%d+') do
    redis.call('HSET', KEYS[2], c, '{"index":' .. c .. ',' .. ARGV[3])
    n = n + 1
  end
end
redis.call('HINCRBY', KEYS[1], 'processed', n)
redis.call('HINCRBY', KEYS[1], 'n_' .. ARGV[4], n)
if redis.call('HINCRBY', KEYS[1], 'remaining', -1) == 0 then finish(KEYS[1], KEYS[4], KEYS[5], ARGV[1], 'completed', ARGV[5]) end
return 1
`;

/**
 * A claimed item's job is running (KEYS meta; ARGV now, retried 0|1). Returns 0 when the job has ended or is gone.
 * (An `incoming` job has no BullMQ items: a worker adds them once ARRIVED has made it `queued`.)
 */
export const START = `
local st = redis.call('HGET', KEYS[1], 'status')
if st ~= 'incoming' and st ~= 'queued' and st ~= 'running' then return 0 end
if st == 'queued' then redis.call('HSET', KEYS[1], 'status', 'running', 'startedAt', ARGV[1]) end
if st == 'incoming' and redis.call('HGET', KEYS[1], 'startedAt') == '' then redis.call('HSET', KEYS[1], 'startedAt', ARGV[1]) end
if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[1], 'retries', -1) end
return 1
`;

/** Ends a job early (KEYS meta, open, hooks; ARGV id, status, now): no line is written for it after this. 0 when it had ended. */
export const END_EARLY = `${FINISH}
local st = redis.call('HGET', KEYS[1], 'status')
if st ~= 'incoming' and st ~= 'queued' and st ~= 'running' then return 0 end
finish(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[1], 'retries', 0)
return 1
`;

/**
 * The lines of items [from, from + #emails) still without one, as not_checked with `reason` (KEYS meta, lines; ARGV
 * from, reason, the emails as JSON strings...). Returns how many it wrote.
 */
export const CLOSE_PAGE = `
local from = tonumber(ARGV[1])
local n = 0
for k = 3, #ARGV do
  local i = from + k - 3
  local line = '{"index":' .. i .. ',"email":' .. ARGV[k] .. ',"attempts":0,"status":"not_checked","reason":"' .. ARGV[2] .. '","result":null}'
  n = n + redis.call('HSETNX', KEYS[2], i, line)
end
redis.call('HINCRBY', KEYS[1], 'processed', n)
redis.call('HINCRBY', KEYS[1], 'n_not_checked', n)
return n
`;

/**
 * Every item of an `incoming` job is written: it becomes `queued` and visible, and its BullMQ items due to be added
 * by a worker, in one step (KEYS meta, open, incoming, expanding; ARGV id).
 */
export const ARRIVED = `
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('HGET', KEYS[1], 'status') ~= 'incoming' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'queued')
redis.call('ZADD', KEYS[2], redis.call('HGET', KEYS[1], 'createdAt'), ARGV[1])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
return 1
`;

/** One job whose BullMQ items are due to be added and not leased, leased until ARGV[2] (KEYS expanding; ARGV now, until). */
export const LEASE_EXPANSION = `
local id = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)[1]
if not id then return false end
redis.call('ZADD', KEYS[1], ARGV[2], id)
return id
`;

/** Webhooks due now, leased until ARGV[3] (KEYS hooks; ARGV now, max, leaseUntil): their job ids. */
export const DUE_HOOKS = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], ARGV[3], id) end
return ids
`;
