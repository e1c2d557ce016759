--[[
  stepGuards(lockKey, token, journalKey, field, runKey) -> nil when the step may commit, else the reply:
    {'LOCK_LOST'}             the job's lock is gone or held by another worker (fencing; token '' skips it)
    {'DONE', journalValue}    this commit was made before (a retried step)
    {'NO_RUN'}
    {'RUN_FINISHED', status}  the run is completed, failed or cancelled: nothing more may change it
]]
--- @include "run-status"

local function stepGuards(lockKey, token, journalKey, field, runKey)
  if token ~= '' and redis.call('GET', lockKey) ~= token then
    return {'LOCK_LOST'}
  end
  local done = redis.call('HGET', journalKey, field)
  if done then
    return {'DONE', done}
  end
  local record = redis.call('HGET', runKey, 'record')
  if not record then
    return {'NO_RUN'}
  end
  local status = runStatus(record)
  if isFinished(status) then
    return {'RUN_FINISHED', status}
  end
  return nil
end
