--[[
  Deletes a key of a session's shared state (the `state` toolbox), once per call: a call that runs again with
  the same idempotency key (its worker died before the result was recorded) gets the answer of its first
  execution and deletes nothing, so it cannot remove a value another agent set in between.

  Nothing is woken: a state_watch waits for its key to be set, and a key it waits for is not set.

  The answers of the latest ARGV[3] calls are kept (a sorted set: member the call's idempotency key, score
  2 * its place in the order of calls + 1 when it removed the key), so the session's calls cannot grow it
  without end; an answer is needed only until its call's result is recorded. The place is counted, not timed:
  calls in one millisecond would tie, and the trim would then go by name rather than drop the oldest.

  KEYS[1] state hash
  KEYS[2] state deletes sorted set

  ARGV[1] state key
  ARGV[2] idempotency key of the call
  ARGV[3] how many calls' answers are kept

  Returns {'DELETED', '1' | '0'} ('1' when the key was set)
]]
local rcall = redis.call

local done = rcall('ZSCORE', KEYS[2], ARGV[2])
if done then
  return {'DELETED', tostring(math.floor(tonumber(done)) % 2)}
end
local removed = rcall('HDEL', KEYS[1], ARGV[1])
local latest = rcall('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]
local place = latest and math.floor(tonumber(latest) / 2) + 1 or 0
rcall('ZADD', KEYS[2], 2 * place + removed, ARGV[2])
rcall('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[3]) + 1))
return {'DELETED', tostring(removed)}
