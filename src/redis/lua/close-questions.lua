--[[
  Closes pending questions of a run that ended (their status becomes cancelled): each one that is still
  pending stops being pending, and the run index stops counting it (a question answered meanwhile is left
  as it is).

  KEYS[1] questions hash
  KEYS[2] pending questions set
  KEYS[3] the shard's run index (base key; includes/run-index.lua)

  ARGV[1 .. #ARGV] question id, closed question JSON, pairs

  Returns the number of questions closed
]]
local rcall = redis.call

--- @include "run-index"

local closed = 0
for index = 1, #ARGV, 2 do
  if rcall('SREM', KEYS[2], ARGV[index]) == 1 then
    rcall('HSET', KEYS[1], ARGV[index], ARGV[index + 1])
    indexQuestion(KEYS[3], cjson.decode(ARGV[index + 1]), -1)
    closed = closed + 1
  end
end
return closed
