--[[
  A step reports the progress of its run (fenced, once per journal field): the run's `progress` field and a
  progress event.

  KEYS[1] job lock key
  KEYS[2] run hash
  KEYS[3] journal hash
  KEYS[4] events stream

  ARGV[1] lock token
  ARGV[2] journal field of this report
  ARGV[3] progress JSON
  ARGV[4] progress event JSON
  ARGV[5] events stream max length

  Returns the replies of stepGuards, or {'OK', eventId}
]]
local rcall = redis.call

--- @include "step-guards"
local refused = stepGuards(KEYS[1], ARGV[1], KEYS[3], ARGV[2], KEYS[2])
if refused then
  return refused
end
rcall('HSET', KEYS[2], 'progress', ARGV[3])
rcall('HSET', KEYS[3], ARGV[2], ARGV[3])
return {'OK', rcall('XADD', KEYS[4], 'MAXLEN', '~', ARGV[5], '*', 'event', ARGV[4])}
