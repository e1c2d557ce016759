--[[
  releaseSession(sessionKey, runId, steersKey, queuedKey, startsKey, eventsKey, maxLen, recordJson)
    A root run that was the session's active run has just finished (decision 0032): the session's active run
    is released; the messages steered into the run that its next model call never read become the first of
    the session's queue, in the order sent, each with a message_queued event (reason `run_ended`, the run's
    agent and finish time from its final record); and when the queue holds anything, the session (its hash key) is
    marked in the shard's queue starts, which a worker's sweep turns into the session's next run. Nothing for a run that
    is not the session's active one (a child run). Needs run-status (cjson).
]]
local function releaseSession(sessionKey, runId, steersKey, queuedKey, startsKey, eventsKey, maxLen, recordJson)
  if redis.call('HGET', sessionKey, 'active_run') ~= runId then
    return
  end
  redis.call('HDEL', sessionKey, 'active_run')
  local steered = redis.call('LRANGE', steersKey, 0, -1)
  if #steered > 0 then
    local record = cjson.decode(recordJson)
    local time = record.finished_at or record.updated_at
    for index = #steered, 1, -1 do
      redis.call('LPUSH', queuedKey, steered[index])
    end
    for index = 1, #steered do
      local message = cjson.decode(steered[index])
      local event = cjson.encode({
        v = 1, kind = 'message_queued', run_id = runId, agent = record.agent, time = time,
        data = { message_id = message.id, reason = 'run_ended', position = index - 1 },
      })
      redis.call('XADD', eventsKey, 'MAXLEN', '~', maxLen, '*', 'event', event)
    end
    redis.call('DEL', steersKey)
  end
  if redis.call('LLEN', queuedKey) > 0 then
    local now = redis.call('TIME')
    redis.call('ZADD', startsKey, 'NX', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000),
      sessionKey)
  end
end
