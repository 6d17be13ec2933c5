package redisq

import "github.com/redis/go-redis/v9"

// The scripts run atomically on the server; every key a script touches is passed in KEYS, as
// Redis requires.

// addScript: KEYS = stream, stats, replies; ARGV = per group of records (an EnqueueAll call's
// part for this shard): its size k, its enqueue-µs, its capacity (0: none) and its k payloads;
// then the sender's name and the call's token. A group is added whole or, when XLEN + k would
// pass its capacity, not at all. It returns 1 or 0 per group (added or not) followed by XLEN
// after the call. Nothing is ever trimmed. Like the acknowledging scripts it replays its reply
// when the same token comes again (replayHead): a call sent twice — a cluster client resends
// after a broken connection or a timeout, see the package doc — adds its records once.
var addScript = redis.NewScript(replayHead + `
local len = redis.call('XLEN', KEYS[1])
local out = {}
local added = 0
local i = 1
while i <= #ARGV - 2 do
  local k = tonumber(ARGV[i])
  local at = ARGV[i + 1]
  local cap = tonumber(ARGV[i + 2])
  local ok = 0
  if cap == 0 or len + k <= cap then
    for j = i + 3, i + 2 + k do
      redis.call('XADD', KEYS[1], '*', 'd', ARGV[j], 't', at)
    end
    len = len + k
    added = added + k
    ok = 1
  end
  out[#out + 1] = ok
  i = i + 3 + k
end
if added > 0 then redis.call('HINCRBY', KEYS[2], 'accepted', added) end
out[#out + 1] = len
` + replayTail)

// replayHead and replayTail wrap a script that adds or acknowledges entries (KEYS end with
// the replies hash; ARGV end with the caller's name and the call's token). The tail keeps the
// call's reply (integers) under the caller's name; the head returns that kept reply when the
// same token comes again. A call whose reply was lost (a client timeout while the script ran)
// is retried with its token and learns what it did, instead of doing it twice or returning
// zeros that would leave its entries uncounted by the process that wrote them.
const replayHead = `
local field, token = ARGV[#ARGV - 1], ARGV[#ARGV]
local last = redis.call('HGET', KEYS[#KEYS], field)
if last and string.sub(last, 1, #token + 1) == token .. ':' then
  local kept = {}
  for v in string.gmatch(string.sub(last, #token + 2), '[^,]+') do kept[#kept + 1] = tonumber(v) end
  return kept
end
`

const replayTail = `
redis.call('HSET', KEYS[#KEYS], field, token .. ':' .. table.concat(out, ','))
return out
`

// ackScript: KEYS = stream, stats, replies; ARGV = group, then id, kind pairs (kind: f applied by this
// flush, d found already applied, s written on its own after the batch failed). Each id is
// acknowledged and, if that XACK removed it from the pending list, deleted — so an entry is
// deleted exactly when this call acknowledged it. It returns 1 or 0 per id, and replays a
// lost reply (replayHead).
var ackScript = redis.NewScript(replayHead + `
local out = {}
local n = {f = 0, d = 0, s = 0}
for i = 2, #ARGV - 2, 2 do
  local id = ARGV[i]
  local acked = redis.call('XACK', KEYS[1], ARGV[1], id)
  if acked == 1 then
    redis.call('XDEL', KEYS[1], id)
    local kind = ARGV[i + 1]
    n[kind] = n[kind] + 1
  end
  out[#out + 1] = acked
end
local total = n.f + n.d + n.s
if total > 0 then
  redis.call('HINCRBY', KEYS[2], 'acked', total)
  if n.f > 0 then redis.call('HINCRBY', KEYS[2], 'applied', n.f) end
  if n.d > 0 then redis.call('HINCRBY', KEYS[2], 'duplicate', n.d) end
  if n.s > 0 then redis.call('HINCRBY', KEYS[2], 'fallback', n.s) end
end
` + replayTail)

// deadLetterScript: KEYS = stream, dead-letter stream, stats, replies; ARGV = group, dead-letter
// MAXLEN, reason, then id, payload, enqueue-µs, deliveries quadruples. Each entry this call
// acknowledges is copied to the dead-letter stream and deleted, atomically. It returns 1 or 0
// per id, and replays a lost reply (replayHead).
var deadLetterScript = redis.NewScript(replayHead + `
local out = {}
local moved = 0
for i = 4, #ARGV - 2, 4 do
  local id = ARGV[i]
  local acked = redis.call('XACK', KEYS[1], ARGV[1], id)
  if acked == 1 then
    redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[2], '*', 'id', id, 'd', ARGV[i + 1], 't', ARGV[i + 2],
      'deliveries', ARGV[i + 3], 'reason', ARGV[3])
    redis.call('XDEL', KEYS[1], id)
    moved = moved + 1
  end
  out[#out + 1] = acked
end
if moved > 0 then
  redis.call('HINCRBY', KEYS[3], 'acked', moved)
  redis.call('HINCRBY', KEYS[3], 'dead_lettered', moved)
end
` + replayTail)

// renewScript: KEYS = stream; ARGV = group, consumer, first id, last id, count. It resets the
// idle time of the entries between the two ids that the consumer still owns (and only
// those: an entry another consumer has already taken over stays with it), keeping their
// delivery counts, so that a live consumer's slow batch is not reclaimed under its feet.
var renewScript = redis.NewScript(`
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[2])
for _, e in ipairs(p) do
  redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, e[1], 'RETRYCOUNT', e[4], 'JUSTID')
end
return #p
`)

// leaseScript: KEYS = a shard's lease; ARGV = owner, milliseconds, "take" or "renew". The
// owner's lease is extended (1); a free one is taken when asked to (2); a lease another owner
// holds is left alone (0). Sent twice, it answers 1 the second time: still the owner's.
var leaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur or ARGV[3] ~= 'take' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 2
`)

// releaseScript: KEYS = a shard's lease; ARGV = owner. It deletes the lease if the owner holds it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// heartbeatScript: KEYS = the queue's consumers (a sorted set: member, expiry in ms of the
// server's clock); ARGV = member, milliseconds (0: leave). It forgets the expired members and
// returns how many are left, this one included unless it leaves.
var heartbeatScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], 10 * ttl)
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
`)
