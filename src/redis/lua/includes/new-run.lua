--[[
  What the scripts that start a run (create-run, retry-run, fork-run) check and write alike.

  newRunAnswer(mode, runKey, sessionKey, chatKey, chatLength, parentKey, queuedKey)
    The script's reply when it stops here, or nil when it goes on to create the run. Why the run may not
    start: {'RUN_EXISTS'} when the run exists; for a child run (parentKey: its parent's hash)
    {'PARENT_FINISHED', status} when the parent is finished ('deleted' when it is gone), for any other run
    {'SESSION_BUSY', activeRunId} when the session has an active run, and {'QUEUE_WAITING', count} when
    queuedKey (the session's queued messages; nil for a run that starts from the queue) is not empty: the
    session is between a run's end and the start of its next queued message, whose runs go first (FIFO,
    decision 0040); then {'CONFLICT', 'chat'} when the
    chat's length is not chatLength (it grew since it was read). Else {'OK'} when `mode` is 'check'.
  startRun(runKey, recordJson, runsKey, runId, sessionsKey, sessionKey, indexBase)
    Writes the run's record (revision 1), adds the run to its session's runs, marks the session active in the
    shard's retention index and enters the run in the run index.
]]
--- @include "run-status"
--- @include "retention-index"
--- @include "run-index"

local function newRunAnswer(mode, runKey, sessionKey, chatKey, chatLength, parentKey, queuedKey)
  if redis.call('EXISTS', runKey) == 1 then
    return {'RUN_EXISTS'}
  end
  if parentKey then
    local parent = redis.call('HGET', parentKey, 'record')
    if not parent then
      return {'PARENT_FINISHED', 'deleted'}
    end
    local status = runStatus(parent)
    if isFinished(status) then
      return {'PARENT_FINISHED', status}
    end
  else
    local active = redis.call('HGET', sessionKey, 'active_run')
    if active then
      return {'SESSION_BUSY', active}
    end
    local queued = queuedKey and redis.call('LLEN', queuedKey) or 0
    if queued > 0 then
      return {'QUEUE_WAITING', tostring(queued)}
    end
  end
  if redis.call('LLEN', chatKey) ~= chatLength then
    return {'CONFLICT', 'chat'}
  end
  if mode == 'check' then
    return {'OK'}
  end
  return nil
end

local function startRun(runKey, recordJson, runsKey, runId, sessionsKey, sessionKey, indexBase)
  redis.call('HSET', runKey, 'record', recordJson, 'rev', 1)
  redis.call('SADD', runsKey, runId)
  markActive(sessionsKey, sessionKey)
  indexRun(indexBase, runId, recordJson)
end
