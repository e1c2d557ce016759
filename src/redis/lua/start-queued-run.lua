--[[
  Starts the session's next run from the first message of its queue (decision 0032), as create-run starts a
  run, with the message taken off the queue in the same write. The run's id derives from the message's, so a
  second start of the same message finds RUN_EXISTS.

  KEYS[1] session hash: record, active_run
  KEYS[2] chat list (the session's main chat)
  KEYS[3] events stream
  KEYS[4] run hash: record, rev
  KEYS[5] set of the session's run ids
  KEYS[6] the shard's sessions (sorted set: session hash key -> last activity, ms; retention)
  KEYS[7] the shard's run index (base key; includes/run-index.lua)
  KEYS[8] the session's queued messages (list)
  KEYS[9] the shard's queue starts (sorted set: session hash key -> ms)

  ARGV[1] 'create', or 'check' (as create-run)
  ARGV[2] the message id expected first in the queue
  ARGV[3] run id
  ARGV[4] run record JSON
  ARGV[5] expected chat length before the append
  ARGV[6] events stream max length
  ARGV[7] number of chat entries M
  ARGV[8 .. 7+M]     chat entries (JSON)
  ARGV[8+M .. #ARGV] events (JSON)

  Returns {'OK', eventId, ...} ({'OK'} for a check) | {'NOT_FIRST'} (the queue's first message is another,
  or none) | {'NO_SESSION'} | as create-run: {'SESSION_BUSY', activeRunId}, {'RUN_EXISTS'}, {'CONFLICT', 'chat'}
]]
local rcall = redis.call

--- @include "append-entries"
--- @include "new-run"

if rcall('HEXISTS', KEYS[1], 'record') == 0 then
  return {'NO_SESSION'}
end
local first = rcall('LINDEX', KEYS[8], 0)
if not first or cjson.decode(first).id ~= ARGV[2] then
  return {'NOT_FIRST'}
end

local answer = newRunAnswer(ARGV[1], KEYS[4], KEYS[1], KEYS[2], tonumber(ARGV[5]), nil)
if answer then
  return answer
end

rcall('LPOP', KEYS[8])
startRun(KEYS[4], ARGV[4], KEYS[5], ARGV[3], KEYS[6], KEYS[1], KEYS[7])
rcall('HSET', KEYS[1], 'active_run', ARGV[3])
-- The run's end marks the session again when more are queued.
rcall('ZREM', KEYS[9], KEYS[1])

return appendEntries(KEYS[2], KEYS[3], ARGV[6], 7)
