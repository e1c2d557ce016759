--[[
  Writes a schedule's record: a new schedule, or a change of one read at a known revision (compare-and-set).

  KEYS[1] set of every schedule id
  KEYS[2] the schedule's hash: record, rev, ...

  ARGV[1] schedule id
  ARGV[2] record JSON
  ARGV[3] expected revision: '' = the schedule must not exist

  Returns
    {'OK', rev}
    {'EXISTS'}     ARGV[3] was '' and the schedule exists
    {'CONFLICT'}   the schedule is gone or its revision is not ARGV[3]: read it again
]]
local rcall = redis.call
local rev = rcall('HGET', KEYS[2], 'rev')
if ARGV[3] == '' then
  if rev then
    return {'EXISTS'}
  end
elseif rev ~= ARGV[3] then
  return {'CONFLICT'}
end
local next = tonumber(rev or '0') + 1
rcall('HSET', KEYS[2], 'record', ARGV[2], 'rev', next)
rcall('SADD', KEYS[1], ARGV[1])
return {'OK', tostring(next)}
