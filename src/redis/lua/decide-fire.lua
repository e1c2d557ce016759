--[[
  Records what one fire of a schedule decided (decision 0036), once per fire time: a fire taken up again, by
  this process or another, gets the decision recorded first. The decision was made from the schedule's
  revision, previous run and waiting fire as the caller read them; when any of them changed since, nothing
  is written and the caller decides again.

  KEYS[1] the schedule's hash: record, rev, last_run, last_fire, queued, fire:<ms>
  KEYS[2] the schedule's decided fire times (sorted set, trimmed to ARGV[6] entries)

  ARGV[1] fire time (ms)
  ARGV[2] the schedule's revision as read
  ARGV[3] its last_run as read ('' = none)
  ARGV[4] its queued fire as read ('' = none)
  ARGV[5] the decision: 'run:<id>', 'skip:<reason>' or 'wait'
  ARGV[6] how many decided fires to keep

  Returns
    {'DECIDED', decision}   the decision recorded now or before ('wait' is never recorded: the fire waits)
    {'NO_SCHEDULE'}         the schedule was deleted
    {'STALE'}               the revision, last run or waiting fire changed: read again, decide again
]]
local rcall = redis.call
local field = 'fire:' .. ARGV[1]
local recorded = rcall('HGET', KEYS[1], field)
if recorded then
  return {'DECIDED', recorded}
end
local state = rcall('HMGET', KEYS[1], 'rev', 'last_run', 'queued', 'last_fire')
if not state[1] then
  return {'NO_SCHEDULE'}
end
if state[1] ~= ARGV[2] or (state[2] or '') ~= ARGV[3] or (state[3] or '') ~= ARGV[4] then
  return {'STALE'}
end
local decision = ARGV[5]
if decision == 'wait' then
  rcall('HSET', KEYS[1], 'queued', ARGV[1])
  return {'DECIDED', decision}
end
rcall('HSET', KEYS[1], field, decision)
if state[3] == ARGV[1] then
  rcall('HDEL', KEYS[1], 'queued')
end
local fireMs = tonumber(ARGV[1])
if string.sub(decision, 1, 4) == 'run:' and fireMs >= tonumber(state[4] or '0') then
  rcall('HSET', KEYS[1], 'last_run', string.sub(decision, 5), 'last_fire', ARGV[1])
end
rcall('ZADD', KEYS[2], fireMs, ARGV[1])
local keep = tonumber(ARGV[6])
local extra = rcall('ZCARD', KEYS[2]) - keep
if extra > 0 then
  local oldest = rcall('ZRANGE', KEYS[2], 0, extra - 1)
  for _, old in ipairs(oldest) do
    rcall('HDEL', KEYS[1], 'fire:' .. old)
  end
  rcall('ZREMRANGEBYRANK', KEYS[2], 0, extra - 1)
end
return {'DECIDED', decision}
