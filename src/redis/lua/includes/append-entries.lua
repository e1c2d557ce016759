--[[
  appendEntries(chatKey, eventsKey, maxLen, countAt, lastAt)
    ARGV[countAt] says how many chat entries follow it; they are appended to the chat in order, and every
    ARGV after them up to ARGV[lastAt] (default: the last) is added to the events stream (trimmed to about
    maxLen). Returns {'OK', eventId...}.
]]
--- @include "webhook-outbox"
local function appendEntries(chatKey, eventsKey, maxLen, countAt, lastAt)
  local count = tonumber(ARGV[countAt])
  if count > 0 then
    redis.call('RPUSH', chatKey, unpack(ARGV, countAt + 1, countAt + count))
  end
  local added = {'OK'}
  for index = countAt + count + 1, lastAt or #ARGV do
    local eventId = redis.call('XADD', eventsKey, 'MAXLEN', '~', maxLen, '*', 'event', ARGV[index])
    noteForWebhooks(eventsKey, eventId, ARGV[index])
    added[#added + 1] = eventId
  end
  return added
end
