package redisq

import "github.com/redis/go-redis/v9"

// The scripts run atomically on the server; every key a script touches is passed in KEYS, as
// Redis requires.

// addScript: KEYS = stream, stats; ARGV = capacity (0: none), then per group of records (an
// EnqueueAll call's): its size k, its enqueue-µs, and its k payloads. A group is added whole
// or, when XLEN + k would pass the capacity, not at all. It returns one value per group (the
// id of its last entry, or "" when it was refused) followed by XLEN after the call. Nothing is
// ever trimmed.
var addScript = redis.NewScript(`
local cap = tonumber(ARGV[1])
local len = redis.call('XLEN', KEYS[1])
local out = {}
local added = 0
local i = 2
while i <= #ARGV do
  local k = tonumber(ARGV[i])
  local at = ARGV[i + 1]
  local id = ''
  if cap == 0 or len + k <= cap then
    for j = i + 2, i + 1 + k do
      id = redis.call('XADD', KEYS[1], '*', 'd', ARGV[j], 't', at)
    end
    len = len + k
    added = added + k
  end
  out[#out + 1] = id
  i = i + 2 + k
end
if added > 0 then redis.call('HINCRBY', KEYS[2], 'accepted', added) end
out[#out + 1] = tostring(len)
return out
`)

// replayHead and replayTail wrap a script that acknowledges entries (KEYS end with the
// replies hash; ARGV end with the consumer's name and the call's token). The tail keeps the
// call's reply under the consumer's name; the head returns that kept reply when the same token
// comes again. A call whose reply was lost (a client timeout while the script ran) is retried
// with its token and learns what it acknowledged, instead of zeros that would leave those
// entries uncounted by the process that wrote them.
const replayHead = `
local field, token = ARGV[#ARGV - 1], ARGV[#ARGV]
local last = redis.call('HGET', KEYS[#KEYS], field)
if last and string.sub(last, 1, #token + 1) == token .. ':' then
  local kept = {}
  for i = #token + 2, #last do kept[#kept + 1] = tonumber(string.sub(last, i, i)) end
  return kept
end
`

const replayTail = `
redis.call('HSET', KEYS[#KEYS], field, token .. ':' .. table.concat(out))
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
