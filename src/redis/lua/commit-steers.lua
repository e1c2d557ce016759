--[[
  Appends the messages steered into a run to its chat before an iteration's model call (decision 0032), and
  takes them off the run's steered messages, fenced like commit-step: once per iteration (journal field
  `steered:<n>`), only while the worker holds the job and the run is not finished. Messages steered after the
  step read the list stay in it, for the next iteration.

  KEYS[1] job lock key
  KEYS[2] run hash
  KEYS[3] journal hash
  KEYS[4] chat list
  KEYS[5] events stream
  KEYS[6] the run's steered messages (list)

  ARGV[1] lock token
  ARGV[2] journal field
  ARGV[3] journal value
  ARGV[4] expected chat length before the append
  ARGV[5] events stream max length
  ARGV[6] number K of steered messages taken (the first K of the list)
  ARGV[7 .. 6+K] their ids, in order
  ARGV[7+K] number of chat entries M, then the entries, then the events (JSON)

  Returns {'OK', eventId, ...} | {'DONE', journalValue} | {'LOCK_LOST'} | {'NO_RUN'} | {'RUN_FINISHED', status}
    | {'CONFLICT', 'chat'} | {'CONFLICT', 'steered'} (the list does not start with those messages)
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "append-entries"

local refused = stepGuards(KEYS[1], ARGV[1], KEYS[3], ARGV[2], KEYS[2])
if refused then
  return refused
end
if rcall('LLEN', KEYS[4]) ~= tonumber(ARGV[4]) then
  return {'CONFLICT', 'chat'}
end
local count = tonumber(ARGV[6])
local steered = rcall('LRANGE', KEYS[6], 0, count - 1)
if #steered ~= count then
  return {'CONFLICT', 'steered'}
end
for index = 1, count do
  if cjson.decode(steered[index]).id ~= ARGV[6 + index] then
    return {'CONFLICT', 'steered'}
  end
end

local result = appendEntries(KEYS[4], KEYS[5], ARGV[5], 7 + count)
rcall('LTRIM', KEYS[6], count, -1)
rcall('HSET', KEYS[3], ARGV[2], ARGV[3])
return result
