--[[
  Cancels a run that is not finished: its record becomes the given (cancelled) record, its events are added,
  the session's active run is released (its unread steered messages queued) and its pending questions
  are closed (includes/cancel-open-run.lua, shared with interrupt-run). Steps of the run see the finished
  status before they start and when they try to commit, and the workers running them are told at once.

  KEYS[1] run hash: record, rev
  KEYS[2] session hash: active_run
  KEYS[3] events stream
  KEYS[4] questions hash
  KEYS[5] pending questions set
  KEYS[6] the shard's finished runs (retention index)
  KEYS[7] the shard's sessions (retention index)
  KEYS[8] the shard's run index (base key; includes/run-index.lua)
  KEYS[9] the run's steered messages (list; includes/release-session.lua)
  KEYS[10] the session's queued messages (list)
  KEYS[11] the shard's queue starts (sorted set)

  ARGV[1] expected run rev
  ARGV[2] cancelled run record JSON
  ARGV[3] run id
  ARGV[4] events stream max length
  ARGV[5] the cancel channel: told the run id, so every worker aborts its in-flight calls
  ARGV[6] number of question updates Q
  ARGV[7 .. 6+2Q]     question id, question JSON (closed), pairs
  ARGV[7+2Q .. #ARGV] events (JSON)

  Returns {'OK', eventId...} | {'NO_RUN'} | {'RUN_FINISHED', status} | {'CONFLICT', 'run'}
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "cancel-open-run"

local refused = runOpen(KEYS[1])
if refused then
  return refused
end
if rcall('HGET', KEYS[1], 'rev') ~= ARGV[1] then
  return {'CONFLICT', 'run'}
end

local keys = {
  run = KEYS[1], session = KEYS[2], events = KEYS[3], questions = KEYS[4], pending = KEYS[5],
  finishedRuns = KEYS[6], sessions = KEYS[7], runIndex = KEYS[8], steers = KEYS[9], queued = KEYS[10],
  queueStarts = KEYS[11],
}
local eventsFrom = 7 + 2 * tonumber(ARGV[6])
local result = {'OK'}
for _, eventId in ipairs(cancelOpenRun(keys, ARGV[3], ARGV[2], ARGV[4], 6, eventsFrom, #ARGV, ARGV[5])) do
  result[#result + 1] = eventId
end
return result
