--[[
  Deletes a key of a session's shared state (the `state` toolbox), once per call: a call that runs again with
  the same idempotency key (its worker died before the result was recorded) gets the answer of its first
  execution and deletes nothing, so it cannot remove a value another agent set in between.

  Nothing is woken: a state_watch waits for its key to be set, and a key it waits for is not set.

  KEYS[1] state hash
  KEYS[2] state deletes hash (idempotency key of a state_delete call -> '1' it removed the key, '0' none was set)

  ARGV[1] state key
  ARGV[2] idempotency key of the call

  Returns {'DELETED', '1' | '0'}
]]
local rcall = redis.call

local done = rcall('HGET', KEYS[2], ARGV[2])
if done then
  return {'DELETED', done}
end
local removed = tostring(rcall('HDEL', KEYS[1], ARGV[1]))
rcall('HSET', KEYS[2], ARGV[2], removed)
return {'DELETED', removed}
