--[[
  Records an event sent to the deployment (POST /v1/events), once per event id, kept for the retention window
  (and at most so many per name), and returns the steps waiting for its name, for the caller to wake. A
  duplicate id records nothing and still returns the waiters (waking them again is harmless), so a client may
  send an event again until it is acknowledged. Also drops what outlived the window: ids, waiters whose
  deadline passed, and the events of names no event came for within it.

  KEYS[1] hash: event id -> stream entry id
  KEYS[2] sorted set: event id -> when it was recorded (ms)
  KEYS[3] the stream of the events of this name
  KEYS[4] sorted set of this name's waiters: "<session id> <job id>" -> wait deadline (ms)
  KEYS[5] sorted set: event name -> when its last event came (ms)

  ARGV[1] event id
  ARGV[2] event entry JSON
  ARGV[3] now (ms since the epoch)
  ARGV[4] retention (ms)
  ARGV[5] most events of one name kept
  ARGV[6] event name
  ARGV[7] the prefix of every name's stream key (the name follows), to drop the streams of stale names
  ARGV[8] the prefix of every name's waiters key (the name follows)

  Returns {'OK' | 'DUPLICATE', entryId, waiter...}
]]
local rcall = redis.call

local now = tonumber(ARGV[3])
local cutoff = now - tonumber(ARGV[4])

for _, id in ipairs(rcall('ZRANGEBYSCORE', KEYS[2], '-inf', cutoff, 'LIMIT', 0, 100)) do
  rcall('HDEL', KEYS[1], id)
  rcall('ZREM', KEYS[2], id)
end
for _, name in ipairs(rcall('ZRANGEBYSCORE', KEYS[5], '-inf', cutoff, 'LIMIT', 0, 10)) do
  if name ~= ARGV[6] then
    rcall('UNLINK', ARGV[7] .. name)
    rcall('ZREMRANGEBYSCORE', ARGV[8] .. name, '-inf', now)
  end
  rcall('ZREM', KEYS[5], name)
end

local code = 'DUPLICATE'
local entry = rcall('HGET', KEYS[1], ARGV[1])
if not entry then
  code = 'OK'
  entry = rcall('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '*', 'event', ARGV[2])
  rcall('HSET', KEYS[1], ARGV[1], entry)
  rcall('ZADD', KEYS[2], now, ARGV[1])
end
rcall('XTRIM', KEYS[3], 'MINID', cutoff)
rcall('ZADD', KEYS[5], now, ARGV[6])
rcall('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local reply = {code, entry}
for _, waiter in ipairs(rcall('ZRANGE', KEYS[4], 0, -1)) do
  table.insert(reply, waiter)
end
return reply
