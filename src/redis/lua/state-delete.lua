--[[
  Deletes a key of a session's shared state (the `state` toolbox), once per call: a call that runs again with
  the same idempotency key (its worker died before the result was recorded) gets the answer of its first
  execution and deletes nothing, so it cannot remove a value another agent set in between.

  Nothing is woken: a state_watch waits for its key to be set, and a key it waits for is not set.

  The answers of the latest ARGV[4] calls are kept (a sorted set: member the call's idempotency key, score
  2 * the call's time in ms + 1 when it removed the key), so the session's calls cannot grow it without end;
  an answer is needed only until its call's result is recorded.

  KEYS[1] state hash
  KEYS[2] state deletes sorted set

  ARGV[1] state key
  ARGV[2] idempotency key of the call
  ARGV[3] now (ms since the epoch)
  ARGV[4] how many calls' answers are kept

  Returns {'DELETED', '1' | '0'} ('1' when the key was set)
]]
local rcall = redis.call

local done = rcall('ZSCORE', KEYS[2], ARGV[2])
if done then
  return {'DELETED', tostring(math.floor(tonumber(done)) % 2)}
end
local removed = rcall('HDEL', KEYS[1], ARGV[1])
rcall('ZADD', KEYS[2], 2 * tonumber(ARGV[3]) + removed, ARGV[2])
rcall('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[4]) + 1))
return {'DELETED', tostring(removed)}
