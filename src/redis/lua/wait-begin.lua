--[[
  The first look of a wait (wait_for_event, sleep) writes its record; every later look (a wake-up, a rerun
  after a crash) reads the same record, so every execution of the call waits for the same thing until the same
  moment. A wait for an event that is still open lists its step as waiting, so a signal to the run wakes it.

  KEYS[1] run hash
  KEYS[2] the run's waits hash: wait:<call key> -> wait JSON, got:<event key> -> call key that received it,
          signal:<id> -> 1, waiting -> JSON object {job id: event name}
  KEYS[3] the run's signals list (signal JSON, oldest first)

  ARGV[1] idempotency key of the call
  ARGV[2] the wait record JSON, written if the call has none
  ARGV[3] job id of the waiting step
  ARGV[4] the event waited for ('' for a sleep)

  Returns {'OK', waitJson, signalJson...} | {'NO_RUN'} | {'RUN_FINISHED', status}
]]
local rcall = redis.call

--- @include "step-guards"

local refused = runOpen(KEYS[1])
if refused then
  return refused
end
local field = 'wait:' .. ARGV[1]
rcall('HSETNX', KEYS[2], field, ARGV[2])
local record = rcall('HGET', KEYS[2], field)
if ARGV[4] ~= '' and cjson.decode(record).status == 'waiting' then
  local text = rcall('HGET', KEYS[2], 'waiting')
  local waiting = text and cjson.decode(text) or {}
  waiting[ARGV[3]] = ARGV[4]
  rcall('HSET', KEYS[2], 'waiting', cjson.encode(waiting))
end
local reply = {'OK', record}
for _, signal in ipairs(rcall('LRANGE', KEYS[3], 0, -1)) do
  table.insert(reply, signal)
end
return reply
