--[[
  Records that a run waits for a worker (decision 0031): no live worker has served what one of its steps
  needs for worker.capability_wait_s. The run's record takes the status waiting_for_worker with what is
  missing, its event is added, and the run hash keeps a marker (field `waiting_for_worker`: the job id and
  the status to go back to) that the resume (worker-found.lua) consumes once. Fenced by the step job's lock
  token, and by the run's revision (the caller built the record from the revision it read).

  KEYS[1] job lock key
  KEYS[2] run hash: record, rev, waiting_for_worker
  KEYS[3] events stream
  KEYS[4] the shard's run index (base key; includes/run-index.lua)

  ARGV[1] lock token
  ARGV[2] expected run rev
  ARGV[3] the waiting record JSON
  ARGV[4] run id
  ARGV[5] events stream max length
  ARGV[6] the waiting_for_worker event JSON
  ARGV[7] the marker JSON

  Returns {'OK', eventId} | {'MARKED'} (an earlier execution recorded it) | {'LOCK_LOST'} | {'NO_RUN'}
    | {'RUN_FINISHED', status} | {'CONFLICT'}
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "run-index"

local refused = lockHeld(KEYS[1], ARGV[1]) or runOpen(KEYS[2])
if refused then
  return refused
end
if rcall('HEXISTS', KEYS[2], 'waiting_for_worker') == 1 then
  return {'MARKED'}
end
if rcall('HGET', KEYS[2], 'rev') ~= ARGV[2] then
  return {'CONFLICT'}
end
rcall('HSET', KEYS[2], 'record', ARGV[3], 'waiting_for_worker', ARGV[7])
rcall('HINCRBY', KEYS[2], 'rev', 1)
indexRun(KEYS[4], ARGV[4], ARGV[3])
return {'OK', rcall('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '*', 'event', ARGV[6])}
