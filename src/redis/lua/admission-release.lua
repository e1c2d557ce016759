--[[
  A root run ended (or was cancelled while queued, or is gone): its slot is freed or its queue entry removed,
  and queued runs are admitted into the room by fair share (decision 0038). Safe to repeat: a run released
  already frees nothing.

  KEYS[1] active runs (hash runId -> tenant)
  KEYS[2] active counts (hash tenant -> number)
  KEYS[3] virtual times (hash tenant -> number)
  KEYS[4] waiting tenants (set)
  KEYS[5] the run's tenant's queue (sorted set): ARGV[5] .. tenant

  ARGV[1] run id
  ARGV[2] tenant
  ARGV[3] the deployment's cap of active runs (0 = none)
  ARGV[4] tenants' settings JSON (as admission-admit)
  ARGV[5] the base of the tenants' queue keys
  ARGV[6] the most runs one call admits

  Returns {'OK', ...}: the runs this call admitted, whose first steps the caller wakes
]]
--- @include "admission-fill"

local keys = { active = KEYS[1], counts = KEYS[2], vtime = KEYS[3], waiting = KEYS[4], queue = KEYS[5] }
local runId = ARGV[1]
local tenant = redis.call('HGET', keys.active, runId)
if tenant then
  redis.call('HDEL', keys.active, runId)
  if redis.call('HINCRBY', keys.counts, tenant, -1) <= 0 then
    redis.call('HDEL', keys.counts, tenant)
  end
end
redis.call('ZREM', keys.queue, runId)
local admitted = fill(keys, ARGV[5], cjson.decode(ARGV[4]), tonumber(ARGV[3]), tonumber(ARGV[6]))
local reply = {'OK'}
for _, id in ipairs(admitted) do
  reply[#reply + 1] = id
end
return reply
