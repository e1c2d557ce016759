--[[
  lockHeld(lockKey, token)  -> nil when the worker holds the job's lock (token '' skips the check),
                               else {'LOCK_LOST'}
  recordOpen(record)        -> nil when the run record (read by the caller; nil or false: none) exists and
                               is not finished, else {'NO_RUN'} or {'RUN_FINISHED', status}
  runOpen(runKey)           -> nil and the run's rev when the run exists and is not finished, else the
                               refusal of recordOpen (one read of the run: its record and rev)
  firstWrite(lockKey, token, runKey, hashKey, field, writtenCode)
                            -> nil when the step may write `field` of `hashKey`, else the refusal of
                               lockHeld or runOpen, or {writtenCode, value} when the field is written
  stepGuards(lockKey, token, journalKey, field, runKey)
                            -> nil when the step may commit, else the reply of the first failed check:
    {'LOCK_LOST'}             the job's lock is gone or held by another worker (fencing)
    {'DONE', journalValue}    this commit was made before (a retried step)
    {'NO_RUN'}
    {'RUN_FINISHED', status}  the run is completed, failed or cancelled: nothing more may change it
]]
--- @include "run-status"

local function lockHeld(lockKey, token)
  if token ~= '' and redis.call('GET', lockKey) ~= token then
    return {'LOCK_LOST'}
  end
  return nil
end

local function recordOpen(record)
  if not record then
    return {'NO_RUN'}
  end
  local status = runStatus(record)
  if isFinished(status) then
    return {'RUN_FINISHED', status}
  end
  return nil
end

local function runOpen(runKey)
  local run = redis.call('HMGET', runKey, 'record', 'rev')
  local refused = recordOpen(run[1])
  if refused then
    return refused
  end
  return nil, run[2]
end

local function firstWrite(lockKey, token, runKey, hashKey, field, writtenCode)
  local refused = lockHeld(lockKey, token) or runOpen(runKey)
  if refused then
    return refused
  end
  local written = redis.call('HGET', hashKey, field)
  if written then
    return {writtenCode, written}
  end
  return nil
end

local function stepGuards(lockKey, token, journalKey, field, runKey)
  local refused = lockHeld(lockKey, token)
  if refused then
    return refused
  end
  local done = redis.call('HGET', journalKey, field)
  if done then
    return {'DONE', done}
  end
  return runOpen(runKey)
end
