--[[
  Removes an idle session and everything in it, when it is still idle: no active run, no pending question,
  and not active since the cutoff (creating a run marks it active, so a run created after the caller
  gathered the keys stops the removal). A session that is busy is looked at again one window later.

  KEYS[1] session hash: record, active_run
  KEYS[2] pending questions set
  KEYS[3] the shard's sessions (retention index)
  KEYS[4] the shard's run index (base key; includes/run-index.lua): the session's runs leave it too
  KEYS[5] the session's set of run ids
  KEYS[6..] every other key of the session (chats and their views, events, runs, journals, state, ...)

  ARGV[1] cutoff: sessions last active at or before this time (ms, Redis clock) are due

  Returns 'EXPIRED' | 'NOT_DUE' | 'BUSY' | 'GONE'
]]
local rcall = redis.call

--- @include "retention-index"
--- @include "run-index"

local notDue = retentionDue(KEYS[3], KEYS[1], ARGV[1])
if notDue then
  return notDue
end
if rcall('HEXISTS', KEYS[1], 'active_run') == 1 or rcall('SCARD', KEYS[2]) > 0 then
  lookAgainLater(KEYS[3], KEYS[1])
  return 'BUSY'
end
local existed = rcall('EXISTS', KEYS[1])
for _, runId in ipairs(rcall('SMEMBERS', KEYS[5])) do
  unindexRun(KEYS[4], runId)
end
rcall('UNLINK', KEYS[1], KEYS[2])
for index = 5, #KEYS, 500 do
  rcall('UNLINK', unpack(KEYS, index, math.min(index + 499, #KEYS)))
end
rcall('ZREM', KEYS[3], KEYS[1])
if existed == 1 then
  return 'EXPIRED'
end
return 'GONE'
