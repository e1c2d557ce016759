--[[
  Creates a run on a session: the run record, its input in the chat, and its first events, in one step.
  One run at a time per session: a session whose active run is not finished refuses a new one.

  KEYS[1] session hash: record (JSON), active_run
  KEYS[2] chat list
  KEYS[3] events stream
  KEYS[4] run hash: record, rev
  KEYS[5] set of the session's run ids
  KEYS[6] the parent run's hash, for a child run (the parent must not be finished); KEYS[4] for a root run
  KEYS[7] the parent run's set of children, for a child run; KEYS[4] for a root run
  KEYS[8] the shard's sessions (sorted set: session hash key -> last activity, ms; retention)
  KEYS[9] the shard's run index (base key; includes/run-index.lua)
  A child run works on a chat of its own beside the session's active run: it neither needs nor takes the
  session's active_run.

  ARGV[1] 'create', or 'check': answer as 'create' would, and write nothing (the caller WATCHes the keys,
          checks, then creates and adds the first step in one MULTI only when the check said OK, so that a
          refused run leaves no step behind)
  ARGV[2] session record JSON: written when the session does not exist ('' = it must exist)
  ARGV[3] run id
  ARGV[4] run record JSON
  ARGV[5] expected chat length before the append
  ARGV[6] events stream max length (approximate trimming)
  ARGV[7] number of chat entries M
  ARGV[8 .. 7+M]     chat entries (JSON)
  ARGV[8+M .. #ARGV] events (JSON)

  Returns
    {'OK', eventId, ...}     ({'OK'} for a check)
    {'NO_SESSION'}
    {'SESSION_BUSY', activeRunId}
    {'RUN_EXISTS'}
    {'PARENT_FINISHED', status}
    {'CONFLICT', 'chat'}   the chat grew since it was read: read it again and retry
]]
local rcall = redis.call

--- @include "append-entries"
--- @include "new-run"

local newSession = rcall('HEXISTS', KEYS[1], 'record') == 0
if newSession and ARGV[2] == '' then
  return {'NO_SESSION'}
end

local child = KEYS[6] ~= KEYS[4]

local answer = newRunAnswer(ARGV[1], KEYS[4], KEYS[1], KEYS[2], tonumber(ARGV[5]), child and KEYS[6] or nil)
if answer then
  return answer
end

if newSession then
  rcall('HSET', KEYS[1], 'record', ARGV[2])
end
startRun(KEYS[4], ARGV[4], KEYS[5], ARGV[3], KEYS[8], KEYS[1], KEYS[9])
if child then
  rcall('SADD', KEYS[7], ARGV[3])
else
  rcall('HSET', KEYS[1], 'active_run', ARGV[3])
end

return appendEntries(KEYS[2], KEYS[3], ARGV[6], 7)
