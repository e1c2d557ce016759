--[[
  Answers a pending question, once: a person's response, or its default when its timeout passed.

  KEYS[1] questions hash
  KEYS[2] pending questions set
  KEYS[3] events stream
  KEYS[4] run hash of the question's run
  KEYS[5] the shard's run index (base key; includes/run-index.lua)
  KEYS[6] the session's remembered approvals hash (decision 0046)

  ARGV[1] question id
  ARGV[2] the question JSON the caller read (the answer applies only to that version)
  ARGV[3] the answered question JSON
  ARGV[4] question_answered event JSON
  ARGV[5] events stream max length
  ARGV[6] key of the approval the answer remembers ('' for none)
  ARGV[7] remembered approval JSON
  ARGV[8] most remembered approvals a session holds

  Returns {'OK', eventId} | {'NOT_FOUND'} | {'CLOSED'} | {'CONFLICT'} | {'RUN_FINISHED', status}
    | {'TOO_MANY'} (the session holds the most remembered approvals; nothing written)
]]
local rcall = redis.call

--- @include "run-status"
--- @include "run-index"

local current = rcall('HGET', KEYS[1], ARGV[1])
if not current then
  return {'NOT_FOUND'}
end
if rcall('SISMEMBER', KEYS[2], ARGV[1]) == 0 then
  return {'CLOSED'}
end
if current ~= ARGV[2] then
  return {'CONFLICT'}
end
local record = rcall('HGET', KEYS[4], 'record')
if record then
  local status = runStatus(record)
  if isFinished(status) then
    return {'RUN_FINISHED', status}
  end
end
if ARGV[6] ~= '' then
  if rcall('HEXISTS', KEYS[6], ARGV[6]) == 0 and rcall('HLEN', KEYS[6]) >= tonumber(ARGV[8]) then
    return {'TOO_MANY'}
  end
  rcall('HSET', KEYS[6], ARGV[6], ARGV[7])
end
rcall('HSET', KEYS[1], ARGV[1], ARGV[3])
rcall('SREM', KEYS[2], ARGV[1])
indexQuestion(KEYS[5], cjson.decode(current), -1)
return {'OK', rcall('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '*', 'event', ARGV[4])}
