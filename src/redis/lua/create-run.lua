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
  KEYS[10] the submission's idempotency key (string: its record JSON, expiring), for a submission that has
           one (decision 0035); KEYS[4] for none. It is in the session's shard: a new session's id is drawn
           in the shard of the key
  KEYS[11] the session's queued messages (list): a root run waits behind them (decision 0040)
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
  ARGV[7] the idempotency record JSON to write with the run ('' = none): {v, run_id, session_id, fingerprint}
  ARGV[8] its time to live, seconds
  ARGV[9] its fingerprint (what the submission asked for), compared with a recorded one
  ARGV[10] number of chat entries M
  ARGV[11 .. 10+M]     chat entries (JSON)
  ARGV[11+M .. #ARGV]  events (JSON)

  Returns
    {'OK', eventId, ...}     ({'OK'} for a check)
    {'IDEMPOTENT', runId}            the key started runId already, for the same fingerprint (nothing written)
    {'IDEMPOTENCY_MISMATCH', runId}  the key started runId already, for another fingerprint (nothing written)
    {'NO_SESSION'}
    {'SESSION_BUSY', activeRunId}
    {'QUEUE_WAITING', count}   the session has no active run but messages queued, whose runs start first
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
local idempotent = ARGV[7] ~= ''

-- Before every other answer: a replay of a submission that started a run finds that run, whatever happened
-- to its session since (busy with that very run, say).
if idempotent then
  local recorded = rcall('GET', KEYS[10])
  if recorded then
    local earlier = cjson.decode(recorded)
    if earlier['fingerprint'] == ARGV[9] then
      return {'IDEMPOTENT', earlier['run_id']}
    end
    return {'IDEMPOTENCY_MISMATCH', earlier['run_id']}
  end
end

local answer = newRunAnswer(ARGV[1], KEYS[4], KEYS[1], KEYS[2], tonumber(ARGV[5]), child and KEYS[6] or nil,
  (not child) and KEYS[11] or nil)
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
if idempotent then
  rcall('SET', KEYS[10], ARGV[7], 'EX', tonumber(ARGV[8]))
end

return appendEntries(KEYS[2], KEYS[3], ARGV[6], 10)
