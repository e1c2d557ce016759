--[[
  Takes a queued message out of the session's queue (DELETE /v1/sessions/:id/queued/:message_id), unless a
  run started from it already.

  KEYS[1] the session's queued messages (list of PendingMessage JSON)

  ARGV[1] the message id

  Returns {'OK'} | {'NOT_FOUND'}
]]
local rcall = redis.call

for _, entry in ipairs(rcall('LRANGE', KEYS[1], 0, -1)) do
  if cjson.decode(entry).id == ARGV[1] then
    rcall('LREM', KEYS[1], 1, entry)
    return {'OK'}
  end
end
return {'NOT_FOUND'}
