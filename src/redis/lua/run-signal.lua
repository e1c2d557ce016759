--[[
  Sends a signal to one run (POST /v1/runs/:id/signal): kept with the run for its waits to receive, once per
  signal id. Returns the steps of the run waiting for an event, for the caller to wake.

  KEYS[1] run hash
  KEYS[2] the run's waits hash (see wait-begin.lua)
  KEYS[3] the run's signals list

  ARGV[1] signal id
  ARGV[2] signal JSON
  ARGV[3] most signals a run keeps

  Returns {'OK', jobId...} | {'DUPLICATE', jobId...} | {'FULL', max} | {'NO_RUN'} | {'RUN_FINISHED', status}
]]
local rcall = redis.call

--- @include "step-guards"

local refused = runOpen(KEYS[1])
if refused then
  return refused
end
local code = 'OK'
if rcall('HEXISTS', KEYS[2], 'signal:' .. ARGV[1]) == 1 then
  code = 'DUPLICATE'
else
  if rcall('LLEN', KEYS[3]) >= tonumber(ARGV[3]) then
    return {'FULL', ARGV[3]}
  end
  rcall('RPUSH', KEYS[3], ARGV[2])
  rcall('HSET', KEYS[2], 'signal:' .. ARGV[1], '1')
end
local reply = {code}
local text = rcall('HGET', KEYS[2], 'waiting')
if text then
  for job in pairs(cjson.decode(text)) do
    table.insert(reply, job)
  end
end
return reply
