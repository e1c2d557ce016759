--[[
  The retention indexes of a shard (see src/redis/retention.ts): when each run finished, and when each session
  was last active. Times are the Redis server's clock, so every worker's writes compare.

  markActive(sessionsKey, sessionKey)
  markFinished(finishedKey, sessionsKey, runId, sessionKey)
  retentionDue(indexKey, member, cutoffMs)
    nil when the entry is due for removal (in the index at or before the cutoff), else why not, as the expire
    scripts reply: 'GONE' (no longer in the index) or 'NOT_DUE'.
  lookAgainLater(indexKey, member)
    An entry kept for now is indexed again at the current time: the sweep looks at it one window later.
]]
local function nowMs()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local function markActive(sessionsKey, sessionKey)
  redis.call('ZADD', sessionsKey, nowMs(), sessionKey)
end

local function markFinished(finishedKey, sessionsKey, runId, sessionKey)
  local now = nowMs()
  redis.call('ZADD', finishedKey, now, runId)
  redis.call('ZADD', sessionsKey, now, sessionKey)
end

local function retentionDue(indexKey, member, cutoffMs)
  local at = redis.call('ZSCORE', indexKey, member)
  if not at then
    return 'GONE'
  end
  if tonumber(at) > tonumber(cutoffMs) then
    return 'NOT_DUE'
  end
  return nil
end

local function lookAgainLater(indexKey, member)
  redis.call('ZADD', indexKey, nowMs(), member)
end
