--[[
  A tool call that requires approval is approved by a remembered approval of the session (decision 0046),
  fenced like ask-question: the approval question is recorded answered (answered_by remembered, never
  pending) with its question_answered event naming the approval. Decided once: a repeated step finds the
  question and reads its answer. An approval revoked since it was read approves nothing.

  KEYS[1] job lock key
  KEYS[2] run hash
  KEYS[3] questions hash
  KEYS[4] events stream
  KEYS[5] the session's remembered approvals hash

  ARGV[1] lock token
  ARGV[2] question id
  ARGV[3] answered question JSON
  ARGV[4] question_answered event JSON
  ARGV[5] events stream max length
  ARGV[6] key of the remembered approval that matched

  Returns {'OK', eventId} | {'EXISTS', questionJson} | {'REVOKED'} | {'LOCK_LOST'} | {'NO_RUN'}
    | {'RUN_FINISHED', status}
]]
local rcall = redis.call

--- @include "step-guards"

local refused = firstWrite(KEYS[1], ARGV[1], KEYS[2], KEYS[3], ARGV[2], 'EXISTS')
if refused then
  return refused
end
if rcall('HEXISTS', KEYS[5], ARGV[6]) == 0 then
  return {'REVOKED'}
end
rcall('HSET', KEYS[3], ARGV[2], ARGV[3])
return {'OK', rcall('XADD', KEYS[4], 'MAXLEN', '~', ARGV[5], '*', 'event', ARGV[4])}
