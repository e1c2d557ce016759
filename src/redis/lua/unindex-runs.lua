--[[
  Removes runs from their shard's run index (a session deleted through the API: its keys are gone).

  KEYS[1] the shard's run index (base key; includes/run-index.lua)

  ARGV[1 .. #ARGV] run ids

  Returns the number of runs given
]]
--- @include "run-index"

for index = 1, #ARGV do
  unindexRun(KEYS[1], ARGV[index])
end
return #ARGV
