--[[
  Writes a note (the `notes` toolbox): a new note is refused when the session already holds the most
  notes it may; rewriting a note always succeeds (a call that runs again writes the same text).

  KEYS[1] notes hash

  ARGV[1] note field (`session:<name>` or `agent:<agent>:<name>`)
  ARGV[2] note JSON
  ARGV[3] most notes the session may hold

  Returns {'OK'} | {'FULL', count}
]]
--- @include "bounded-hash"

local full = boundedHashSet(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]))
if full then
  return full
end
return {'OK'}
