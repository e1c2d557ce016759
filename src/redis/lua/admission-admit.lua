--[[
  Admits a root run, or queues it until fair admission lets it in (decision 0038). Called by the API after it
  wrote the run, and by the run's first step when it runs (again) while the run is still queued; both may race,
  from any number of processes: the run is admitted at most once.

  KEYS[1] active runs (hash runId -> tenant)
  KEYS[2] active counts (hash tenant -> number)
  KEYS[3] virtual times (hash tenant -> number)
  KEYS[4] waiting tenants (set)
  KEYS[5] the run's tenant's queue (sorted set): ARGV[6] .. tenant

  ARGV[1] run id
  ARGV[2] tenant
  ARGV[3] queue score: (11 - priority) * 1e13 + created ms
  ARGV[4] the deployment's cap of active runs (0 = none)
  ARGV[5] tenants' settings JSON: {tenant: [max_active_runs (0 = none), weight]}, `default` for the rest
  ARGV[6] the base of the tenants' queue keys (a tenant's name follows it)
  ARGV[7] the most runs one call admits
  ARGV[8] '1' when the caller is the run's own first step, about to start (decision 0048): an admitted run
          whose tenant holds more than its share while another tenant's runs wait under theirs, in a full
          deployment, yields its slot (back to its queue, its score kept) and the room is filled; '0' for
          the API's call after it wrote the run

  Returns {'ADMITTED', ...} or {'QUEUED', ...}: whether this run is admitted, then every run this call
  admitted (this one included), whose first steps the caller wakes
]]
--- @include "admission-fill"

local keys = { active = KEYS[1], counts = KEYS[2], vtime = KEYS[3], waiting = KEYS[4], queue = KEYS[5] }
local runId = ARGV[1]
local settings, cap = cjson.decode(ARGV[5]), tonumber(ARGV[4])
local tenant = redis.call('HGET', keys.active, runId)
if tenant then
  if ARGV[8] ~= '1' or not overShare(keys, ARGV[6], settings, cap, tenant) then
    return {'ADMITTED'}
  end
  unadmit(keys, ARGV[6], settings, tenant, runId, tonumber(ARGV[3]))
else
  enqueue(keys, ARGV[6], ARGV[2], runId, tonumber(ARGV[3]))
end
local admitted = fill(keys, ARGV[6], settings, cap, tonumber(ARGV[7]))
local reply = {'QUEUED'}
for _, id in ipairs(admitted) do
  if id == runId then
    reply[1] = 'ADMITTED'
  end
  reply[#reply + 1] = id
end
return reply
