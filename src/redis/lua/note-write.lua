--[[
  Writes a note (the `notes` toolbox): a new note is refused when the session already holds the most
  notes it may; rewriting a note always succeeds (a call that runs again writes the same text).

  KEYS[1] notes hash

  ARGV[1] note field (`session:<name>` or `agent:<agent>:<name>`)
  ARGV[2] note JSON
  ARGV[3] most notes the session may hold

  Returns {'OK'} | {'FULL', count}
]]
local rcall = redis.call

if rcall('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  local count = rcall('HLEN', KEYS[1])
  if count >= tonumber(ARGV[3]) then
    return {'FULL', tostring(count)}
  end
end
rcall('HSET', KEYS[1], ARGV[1], ARGV[2])
return {'OK'}
