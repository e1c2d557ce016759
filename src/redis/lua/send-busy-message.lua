--[[
  Accepts a message sent to a busy session (decision 0032): `queue` appends it to the session's queue (with a
  message_queued event), `steer` to the active run's steered messages (read by its next iteration). At most
  ARGV[4] messages wait in the session at once, queued and steered to its active run together.

  KEYS[1] session hash: active_run
  KEYS[2] the session's queued messages (list)
  KEYS[3] the steered messages of the run the caller read as active (list)
  KEYS[4] events stream
  KEYS[5] the shard's queue starts (sorted set: session hash key -> ms)

  ARGV[1] 'queue' or 'steer'
  ARGV[2] the run the caller read as the session's active run
  ARGV[3] the message (PendingMessage JSON)
  ARGV[4] the most messages that may wait
  ARGV[5] the message_queued event (JSON, its position filled in here; '' for a steer)
  ARGV[6] events stream max length

  Returns
    {'OK', position}     accepted: its place among the waiting messages (0 = next)
    {'IDLE'}             the session has no active run and nothing queued: start a run instead
    {'CHANGED', runId}   the session's active run is another: read it again
    {'FULL', count}      ARGV[4] messages wait already
]]
local rcall = redis.call

local active = rcall('HGET', KEYS[1], 'active_run')
local queued = rcall('LLEN', KEYS[2])
if not active then
  -- A session whose queue is not empty is not idle: its next run is being started; a queued message goes
  -- behind the others (first come, first served), a steered one has no run to join.
  if queued == 0 or ARGV[1] ~= 'queue' then
    return {'IDLE'}
  end
elseif active ~= ARGV[2] then
  return {'CHANGED', active}
end

local steered = active and rcall('LLEN', KEYS[3]) or 0
if queued + steered >= tonumber(ARGV[4]) then
  return {'FULL', tostring(queued + steered)}
end

if ARGV[1] == 'steer' then
  rcall('RPUSH', KEYS[3], ARGV[3])
  return {'OK', tostring(steered)}
end

rcall('RPUSH', KEYS[2], ARGV[3])
local event = string.gsub(ARGV[5], '"position":%-1', '"position":' .. queued, 1)
rcall('XADD', KEYS[4], 'MAXLEN', '~', ARGV[6], '*', 'event', event)
if not active then
  rcall('ZADD', KEYS[5], 'NX', 0, KEYS[1])
end
return {'OK', tostring(queued)}
