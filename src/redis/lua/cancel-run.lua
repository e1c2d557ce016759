--[[
  Cancels a run that is not finished: its record becomes the given (cancelled) record, its events are added,
  the session's active run is released and its pending questions are closed. Steps of the run see the
  finished status before they start and when they try to commit.

  KEYS[1] run hash: record, rev
  KEYS[2] session hash: active_run
  KEYS[3] events stream
  KEYS[4] questions hash
  KEYS[5] pending questions set
  KEYS[6] the shard's finished runs (retention index)
  KEYS[7] the shard's sessions (retention index)
  KEYS[8] the shard's run index (base key; includes/run-index.lua)

  ARGV[1] expected run rev
  ARGV[2] cancelled run record JSON
  ARGV[3] run id
  ARGV[4] events stream max length
  ARGV[5] number of question updates Q
  ARGV[6 .. 5+2Q]     question id, question JSON (closed), pairs
  ARGV[6+2Q .. #ARGV] events (JSON)

  Returns {'OK', eventId...} | {'NO_RUN'} | {'RUN_FINISHED', status} | {'CONFLICT', 'run'}
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "retention-index"
--- @include "run-index"
--- @include "webhook-outbox"

local refused = runOpen(KEYS[1])
if refused then
  return refused
end
if rcall('HGET', KEYS[1], 'rev') ~= ARGV[1] then
  return {'CONFLICT', 'run'}
end

rcall('HSET', KEYS[1], 'record', ARGV[2])
rcall('HINCRBY', KEYS[1], 'rev', 1)
indexRun(KEYS[8], ARGV[3], ARGV[2])
if rcall('HGET', KEYS[2], 'active_run') == ARGV[3] then
  rcall('HDEL', KEYS[2], 'active_run')
end
markFinished(KEYS[6], KEYS[7], ARGV[3], KEYS[2])

local updates = tonumber(ARGV[5])
for index = 6, 5 + 2 * updates, 2 do
  if rcall('SISMEMBER', KEYS[5], ARGV[index]) == 1 then
    rcall('HSET', KEYS[4], ARGV[index], ARGV[index + 1])
    rcall('SREM', KEYS[5], ARGV[index])
    indexQuestion(KEYS[8], cjson.decode(ARGV[index + 1]), -1)
  end
end
-- A question of this run asked after the caller read the pending ones: no longer pending either.
local marker = '"run_id":"' .. ARGV[3] .. '"'
for _, id in ipairs(rcall('SMEMBERS', KEYS[5])) do
  local question = rcall('HGET', KEYS[4], id)
  if question and string.find(question, marker, 1, true) then
    rcall('SREM', KEYS[5], id)
    indexQuestion(KEYS[8], cjson.decode(question), -1)
  end
end

local result = {'OK'}
for index = 6 + 2 * updates, #ARGV do
  local eventId = rcall('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'event', ARGV[index])
  noteForWebhooks(KEYS[3], eventId, ARGV[index])
  result[#result + 1] = eventId
end
return result
