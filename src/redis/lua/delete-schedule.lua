--[[
  Deletes a schedule: its record and what its fires decided. The runs it started are left alone.

  KEYS[1] set of every schedule id
  KEYS[2] the schedule's hash
  KEYS[3] the schedule's decided fire times (sorted set)

  ARGV[1] schedule id

  Returns {'OK'}, or {'NO_SCHEDULE'}
]]
local rcall = redis.call
if rcall('EXISTS', KEYS[2]) == 0 then
  rcall('SREM', KEYS[1], ARGV[1])
  return {'NO_SCHEDULE'}
end
rcall('DEL', KEYS[2], KEYS[3])
rcall('SREM', KEYS[1], ARGV[1])
return {'OK'}
