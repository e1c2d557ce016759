--[[
  Sets a key of a session's shared state (the `state` toolbox) and hands back the steps parked until that
  key is set (state_watch); the caller wakes them.

  KEYS[1] state hash
  KEYS[2] state watchers hash

  ARGV[1] state key
  ARGV[2] value JSON
  ARGV[3] most keys the state may hold (a new key beyond it is refused)

  Returns {'OK', watchersJson} (the watchers state-watch listed: a JSON array of {job, deadline} or of bare job
  ids, '[]' when none waits) | {'FULL', count}
]]
local rcall = redis.call

--- @include "bounded-hash"

local full = boundedHashSet(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]))
if full then
  return full
end
local watchers = rcall('HGET', KEYS[2], ARGV[1])
if watchers then
  rcall('HDEL', KEYS[2], ARGV[1])
  return {'OK', watchers}
end
return {'OK', '[]'}
