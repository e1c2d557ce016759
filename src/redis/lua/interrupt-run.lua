--[[
  Interrupts a session's active run with a new message (on_busy: interrupt, decision 0032), in one write:
  the active run is cancelled as cancel-run cancels it (includes/cancel-open-run.lua: its record, its
  events, its pending questions closed, its unread steered messages queued, the workers told) and a new run starts on the session's chat with the message, as
  create-run starts one. Nothing can come between the two: the session never has two active runs, nor a
  moment with none another message could take.

  KEYS[1]  session hash: record, active_run
  KEYS[2]  chat list (the session's main chat)
  KEYS[3]  events stream
  KEYS[4]  the active run's hash
  KEYS[5]  set of the session's run ids
  KEYS[6]  questions hash
  KEYS[7]  pending questions set
  KEYS[8]  the shard's finished runs (retention index)
  KEYS[9]  the shard's sessions (retention index)
  KEYS[10] the shard's run index (base key)
  KEYS[11] the new run's hash
  KEYS[12] the active run's steered messages (list)
  KEYS[13] the session's queued messages (list)
  KEYS[14] the shard's queue starts (sorted set)

  ARGV[1] 'create', or 'check': answer as 'create' would and write nothing (a checked write, decision 0015)
  ARGV[2] the run the caller read as the session's active run
  ARGV[3] its expected rev
  ARGV[4] its cancelled record JSON
  ARGV[5] the new run's id
  ARGV[6] the new run's record JSON
  ARGV[7] expected chat length before the append
  ARGV[8] events stream max length
  ARGV[9] the cancel channel: told the active run's id, so every worker aborts its in-flight calls even when
          the caller dies right after this write (decision 0040)
  ARGV[10] number of question updates Q, then Q pairs (question id, closed question JSON)
  then the number of cancel events C, then C events (JSON)
  then the number of chat entries M, then M entries, then the new run's events (JSON) to the end

  Returns {'OK', eventId...} ({'OK'} for a check) | {'NO_SESSION'} | {'CHANGED', activeRunId or ''}
    | {'NO_RUN'} | {'RUN_FINISHED', status} | {'CONFLICT', 'run' or 'chat'} | {'RUN_EXISTS'}
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "append-entries"
--- @include "new-run"
--- @include "cancel-open-run"

if rcall('HEXISTS', KEYS[1], 'record') == 0 then
  return {'NO_SESSION'}
end
local active = rcall('HGET', KEYS[1], 'active_run')
if active ~= ARGV[2] then
  return {'CHANGED', active or ''}
end
local refused = runOpen(KEYS[4])
if refused then
  return refused
end
if rcall('HGET', KEYS[4], 'rev') ~= ARGV[3] then
  return {'CONFLICT', 'run'}
end
if rcall('EXISTS', KEYS[11]) == 1 then
  return {'RUN_EXISTS'}
end
if rcall('LLEN', KEYS[2]) ~= tonumber(ARGV[7]) then
  return {'CONFLICT', 'chat'}
end
if ARGV[1] == 'check' then
  return {'OK'}
end

-- The active run is cancelled (as cancel-run.lua).
local keys = {
  run = KEYS[4], session = KEYS[1], events = KEYS[3], questions = KEYS[6], pending = KEYS[7],
  finishedRuns = KEYS[8], sessions = KEYS[9], runIndex = KEYS[10], steers = KEYS[12], queued = KEYS[13],
  queueStarts = KEYS[14],
}
local cancelEventsAt = 11 + 2 * tonumber(ARGV[10])
local cancelEvents = tonumber(ARGV[cancelEventsAt])
local result = {'OK'}
local cancelled = cancelOpenRun(keys, ARGV[2], ARGV[4], ARGV[8], 10, cancelEventsAt + 1,
  cancelEventsAt + cancelEvents, ARGV[9])
for _, eventId in ipairs(cancelled) do
  result[#result + 1] = eventId
end

-- The new run starts (as create-run.lua) and is the session's active run.
startRun(KEYS[11], ARGV[6], KEYS[5], ARGV[5], KEYS[9], KEYS[1], KEYS[10])
rcall('HSET', KEYS[1], 'active_run', ARGV[5])
-- The new run's end marks the session again when messages are queued.
rcall('ZREM', KEYS[14], KEYS[1])
local added = appendEntries(KEYS[2], KEYS[3], ARGV[8], cancelEventsAt + cancelEvents + 1)
for index = 2, #added do
  result[#result + 1] = added[index]
end
return result
