--[[
  The retention indexes of a shard (see src/redis/retention.ts): when each run finished, and when each session
  was last active. Times are the Redis server's clock, so every worker's writes compare.

  markActive(sessionsKey, sessionKey)
  markFinished(finishedKey, sessionsKey, runId, sessionKey)
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
