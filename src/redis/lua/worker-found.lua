--[[
  Ends a run's wait for a worker (decision 0031), once: a worker that serves what the run waited for removes
  the marker wait-for-worker.lua left, writes the record the caller built from the revision it read (the
  status it had before, without `waiting_for`) and adds the worker_found event. Not fenced by a job lock:
  the caller does not hold the parked step; the marker and the revision make it happen once.

  KEYS[1] run hash: record, rev, waiting_for_worker
  KEYS[2] events stream
  KEYS[3] the shard's run index (base key; includes/run-index.lua)

  ARGV[1] expected run rev
  ARGV[2] the resumed record JSON
  ARGV[3] run id
  ARGV[4] events stream max length
  ARGV[5] the worker_found event JSON

  Returns {'OK', eventId} | {'NOT_WAITING'} | {'NO_RUN'} | {'RUN_FINISHED', status} (marker removed)
    | {'CONFLICT'}
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "run-index"

if rcall('HEXISTS', KEYS[1], 'waiting_for_worker') == 0 then
  return {'NOT_WAITING'}
end
local refused = runOpen(KEYS[1])
if refused then
  rcall('HDEL', KEYS[1], 'waiting_for_worker')
  return refused
end
if rcall('HGET', KEYS[1], 'rev') ~= ARGV[1] then
  return {'CONFLICT'}
end
rcall('HDEL', KEYS[1], 'waiting_for_worker')
rcall('HSET', KEYS[1], 'record', ARGV[2])
rcall('HINCRBY', KEYS[1], 'rev', 1)
indexRun(KEYS[3], ARGV[3], ARGV[2])
return {'OK', rcall('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'event', ARGV[5])}
