--[[
  Ends a wait for an event, once: with the event it received, or timed out. The first settlement stands;
  every later one (another execution of the call, a racing wake-up) gets it back. An event is received by at
  most one wait of a run: a wait offered an event the run already received is told TAKEN and looks further.

  KEYS[1] run hash
  KEYS[2] the run's waits hash (see wait-begin.lua)

  ARGV[1] idempotency key of the call
  ARGV[2] the settled wait record JSON
  ARGV[3] the key of the event received (e:<event id> or s:<signal id>; '' for a timeout)
  ARGV[4] job id of the waiting step

  Returns {'SETTLED', waitJson} (the record that stands) | {'TAKEN'} | {'NO_WAIT'} | {'NO_RUN'}
        | {'RUN_FINISHED', status}
]]
local rcall = redis.call

--- @include "step-guards"

local refused = runOpen(KEYS[1])
if refused then
  return refused
end
local field = 'wait:' .. ARGV[1]
local current = rcall('HGET', KEYS[2], field)
if not current then
  return {'NO_WAIT'}
end
if cjson.decode(current).status ~= 'waiting' then
  return {'SETTLED', current}
end
if ARGV[3] ~= '' then
  if rcall('HEXISTS', KEYS[2], 'got:' .. ARGV[3]) == 1 then
    return {'TAKEN'}
  end
  rcall('HSET', KEYS[2], 'got:' .. ARGV[3], ARGV[1])
end
rcall('HSET', KEYS[2], field, ARGV[2])
local text = rcall('HGET', KEYS[2], 'waiting')
if text then
  local waiting = cjson.decode(text)
  waiting[ARGV[4]] = nil
  if next(waiting) == nil then
    rcall('HDEL', KEYS[2], 'waiting')
  else
    rcall('HSET', KEYS[2], 'waiting', cjson.encode(waiting))
  end
end
return {'SETTLED', ARGV[2]}
