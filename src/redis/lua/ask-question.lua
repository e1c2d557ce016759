--[[
  A step asks a person a question (fenced like commit-step): the question becomes pending and an ask_user
  event is added. Asking again (a resumed or retried step) finds it and changes nothing.

  KEYS[1] job lock key
  KEYS[2] run hash
  KEYS[3] questions hash
  KEYS[4] pending questions set
  KEYS[5] events stream
  KEYS[6] the shard's run index (base key; includes/run-index.lua)

  ARGV[1] lock token
  ARGV[2] question id
  ARGV[3] question JSON
  ARGV[4] ask_user event JSON
  ARGV[5] events stream max length

  Returns {'OK', eventId} | {'EXISTS', questionJson} | {'LOCK_LOST'} | {'NO_RUN'} | {'RUN_FINISHED', status}
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "run-index"
--- @include "webhook-outbox"

local refused = firstWrite(KEYS[1], ARGV[1], KEYS[2], KEYS[3], ARGV[2], 'EXISTS')
if refused then
  return refused
end
rcall('HSET', KEYS[3], ARGV[2], ARGV[3])
rcall('SADD', KEYS[4], ARGV[2])
indexQuestion(KEYS[6], cjson.decode(ARGV[3]), 1)
local eventId = rcall('XADD', KEYS[5], 'MAXLEN', '~', ARGV[5], '*', 'event', ARGV[4])
noteForWebhooks(KEYS[5], eventId, ARGV[4])
return {'OK', eventId}
