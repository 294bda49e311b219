// Lua scripts of the Redis key store (docs/keys.md): each change and its change-feed entry in one atomic script.
//
// KEYS of every writing script: 1 records hash (id -> JSON), 2 hash index (SHA-256 -> id), 3 sequence counter,
// 4 change stream. A change INCRs the sequence to N and appends stream entry `0-N` listing the changed key
// hashes (or `reset 1` when there are more than ARGV[1]); the stream keeps about ARGV[2] entries.

/** Appends the feed entry for the hashes in `changed`; the caller has made its writes. */
const FEED_ENTRY = `
local function feed(changed)
  local seq = redis.call('INCR', KEYS[3])
  -- A stream left from another sequence (the counter was deleted): start it afresh, readers see the jump.
  local top = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)[1]
  if top then
    local last = string.match(top[1], '^0%-(%d+)$')
    if not last or tonumber(last) >= seq then redis.call('DEL', KEYS[4]) end
  end
  local id = '0-' .. seq
  if #changed > tonumber(ARGV[1]) then
    redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[2], id, 'reset', '1')
  else
    redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[2], id, 'hashes', table.concat(changed, ' '))
  end
end
`;

/** ARGV: maxListed, retained, then (id, hash, json) per key. All or nothing: an id or hash in use creates none. */
export const CREATE_LUA = `${FEED_ENTRY}
local n = (#ARGV - 2) / 3
for i = 0, n - 1 do
  local b = 3 + i * 3
  if redis.call('HEXISTS', KEYS[1], ARGV[b]) == 1 or redis.call('HEXISTS', KEYS[2], ARGV[b + 1]) == 1 then return 0 end
end
local changed = {}
for i = 0, n - 1 do
  local b = 3 + i * 3
  redis.call('HSET', KEYS[1], ARGV[b], ARGV[b + 2])
  redis.call('HSET', KEYS[2], ARGV[b + 1], ARGV[b])
  changed[#changed + 1] = ARGV[b + 1]
end
if n > 0 then feed(changed) end
return 1
`;

/** ARGV: maxListed, retained, id, status, updatedAt. Revocation is final. */
export const STATUS_LUA = `${FEED_ENTRY}
local raw = redis.call('HGET', KEYS[1], ARGV[3])
if not raw then return 0 end
local r = cjson.decode(raw)
if r.status == 'revoked' and ARGV[4] ~= 'revoked' then return 0 end
r.status = ARGV[4]
r.updatedAt = ARGV[5]
redis.call('HSET', KEYS[1], ARGV[3], cjson.encode(r))
feed({ r.hash })
return 1
`;

/** ARGV: maxListed, retained, id, JSON patch of limits (null = back to the default), updatedAt. */
export const LIMITS_LUA = `${FEED_ENTRY}
local raw = redis.call('HGET', KEYS[1], ARGV[3])
if not raw then return 0 end
local r = cjson.decode(raw)
for k, v in pairs(cjson.decode(ARGV[4])) do r[k] = v end
r.updatedAt = ARGV[5]
redis.call('HSET', KEYS[1], ARGV[3], cjson.encode(r))
feed({ r.hash })
return 1
`;

/** KEYS: records, hash index; ARGV: SHA-256 hex. The record's JSON, or nil. */
export const LOOKUP_LUA = `
local id = redis.call('HGET', KEYS[2], ARGV[1])
if not id then return false end
return redis.call('HGET', KEYS[1], id)
`;

/** KEYS: sequence, stream; ARGV: cursor, count. {head} when nothing is newer, else {head, entries after the cursor}. */
export const FEED_LUA = `
local head = tonumber(redis.call('GET', KEYS[1]) or '0')
local from = tonumber(ARGV[1])
if head <= from then return { head } end
return { head, redis.call('XRANGE', KEYS[2], '0-' .. (from + 1), '+', 'COUNT', ARGV[2]) }
`;
