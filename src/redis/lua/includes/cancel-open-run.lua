--[[
  cancelOpenRun(keys, runId, recordJson, maxLen, questionsAt, eventsFrom, eventsTo, channel)
    What cancel-run and interrupt-run write alike to cancel a run the caller checked is open (decision 0032):
    its record becomes the cancelled one (rev + 1, re-indexed); the session's active run is released
    (release-session.lua: unread steered messages queued); its pending questions are closed: ARGV[questionsAt]
    is their count Q, then Q pairs (question id, closed question JSON), and any other question of the run
    still pending (asked after the caller read them) is no longer pending either; the cancel events
    ARGV[eventsFrom .. eventsTo] are appended (and noted for webhooks); and `channel` is told the run id, so
    every worker aborts the run's in-flight model requests and tool handlers whether or not the caller lives
    on after this write (decision 0040).
    keys: {run, session, events, questions, pending, finishedRuns, sessions, runIndex, steers, queued,
           queueStarts}
    Returns the appended events' stream ids, in order.
]]
--- @include "retention-index"
--- @include "run-index"
--- @include "webhook-outbox"
--- @include "release-session"

local function cancelOpenRun(keys, runId, recordJson, maxLen, questionsAt, eventsFrom, eventsTo, channel)
  redis.call('HSET', keys.run, 'record', recordJson)
  redis.call('HINCRBY', keys.run, 'rev', 1)
  indexRun(keys.runIndex, runId, recordJson)
  releaseSession(keys.session, runId, keys.steers, keys.queued, keys.queueStarts, keys.events, maxLen,
    recordJson)
  markFinished(keys.finishedRuns, keys.sessions, runId, keys.session)

  local updates = tonumber(ARGV[questionsAt])
  for index = questionsAt + 1, questionsAt + 2 * updates, 2 do
    if redis.call('SISMEMBER', keys.pending, ARGV[index]) == 1 then
      redis.call('HSET', keys.questions, ARGV[index], ARGV[index + 1])
      redis.call('SREM', keys.pending, ARGV[index])
      indexQuestion(keys.runIndex, cjson.decode(ARGV[index + 1]), -1)
    end
  end
  local marker = '"run_id":"' .. runId .. '"'
  for _, id in ipairs(redis.call('SMEMBERS', keys.pending)) do
    local question = redis.call('HGET', keys.questions, id)
    if question and string.find(question, marker, 1, true) then
      redis.call('SREM', keys.pending, id)
      indexQuestion(keys.runIndex, cjson.decode(question), -1)
    end
  end

  local eventIds = {}
  for index = eventsFrom, eventsTo do
    local eventId = redis.call('XADD', keys.events, 'MAXLEN', '~', maxLen, '*', 'event', ARGV[index])
    noteForWebhooks(keys.events, eventId, ARGV[index])
    eventIds[#eventIds + 1] = eventId
  end
  redis.call('PUBLISH', channel, runId)
  return eventIds
end
