--[[
  Fair admission (decision 0038). The admission keys share one hash tag, so every decision is one atomic
  script whatever the number of API and worker processes.

  active (hash runId -> tenant)     root runs admitted and not yet released
  counts (hash tenant -> number)    active runs per tenant
  vtime (hash tenant -> number)     each tenant's virtual time: admissions so far divided by its weight;
                                    field `_system` (no tenant's name starts with `_`): the virtual time of
                                    the latest admission
  waiting (set of tenants)          tenants with queued runs
  queueBase .. tenant (sorted set)  the tenant's queued runs, by (11 - priority) * 1e13 + created ms: highest
                                    priority first, then oldest

  settingsOf(settings, tenant) -> maxActive (0 = none), weight
  enqueue(keys, queueBase, tenant, runId, score)
    Queues the run (its score kept when queued already). A tenant that starts waiting takes at least the
    smallest virtual time of the tenants waiting already (none waiting: that of the latest admission), so
    time spent idle is not banked as credit (start-time fair queueing).
  overShare(keys, queueBase, settings, cap, tenant) -> boolean
    Whether, in a full deployment, the tenant holds more than its share against a waiting tenant under its
    own limit: its active runs / weight above the other's (active runs + 1) / weight (decision 0048).
  unadmit(keys, queueBase, settings, tenant, runId, score)
    Takes an admitted run back to the front of its place in its tenant's queue, as if never admitted.
  fill(keys, queueBase, settings, cap, bound) -> admitted run ids
    While the deployment is under `cap` active runs (0 = none) and at most `bound` times: of the waiting
    tenants under their own max_active_runs, the one that would hold the smallest share of the slots with
    one more run (its active runs plus one, divided by its weight), then the smallest virtual time, then the
    smaller name, has its first queued run admitted, and its virtual time grows by 1 / weight. Slots, not
    only admissions, are what is shared: a tenant that comes while another holds every slot takes the freed
    slots until both hold their weight's share, instead of alternating with it while the other keeps the
    slots it took alone; where the shares tie (few slots, or shares reached), virtual time keeps the
    admissions in proportion to the weights (decision 0048).
]]
local function settingsOf(settings, tenant)
  local entry = settings[tenant] or settings['default']
  if entry then
    return entry[1], entry[2]
  end
  return 0, 1
end

local function enqueue(keys, queueBase, tenant, runId, score)
  -- A tenant whose queue emptied is left in the set until a fill passes: it waits for nothing.
  if redis.call('ZCARD', keys.queue) == 0 then
    local least = nil
    for _, other in ipairs(redis.call('SMEMBERS', keys.waiting)) do
      if other ~= tenant then
        if redis.call('ZCARD', queueBase .. other) == 0 then
          redis.call('SREM', keys.waiting, other)
        else
          local time = tonumber(redis.call('HGET', keys.vtime, other) or '0')
          if least == nil or time < least then
            least = time
          end
        end
      end
    end
    if least == nil then
      least = tonumber(redis.call('HGET', keys.vtime, '_system') or '0')
    end
    local own = tonumber(redis.call('HGET', keys.vtime, tenant) or '0')
    if least > own then
      redis.call('HSET', keys.vtime, tenant, string.format('%.17g', least))
    end
    redis.call('SADD', keys.waiting, tenant)
  end
  redis.call('ZADD', keys.queue, 'NX', score, runId)
end

-- The waiting tenant under its own limit that would hold the smallest share with one more run: its name and
-- that share, then its virtual time (nil when none).
local function bestWaiting(keys, queueBase, settings)
  local best, bestShare, bestTime = nil, nil, nil
  for _, tenant in ipairs(redis.call('SMEMBERS', keys.waiting)) do
    if redis.call('ZCARD', queueBase .. tenant) == 0 then
      redis.call('SREM', keys.waiting, tenant)
    else
      local maxActive, weight = settingsOf(settings, tenant)
      local count = tonumber(redis.call('HGET', keys.counts, tenant) or '0')
      if maxActive == 0 or count < maxActive then
        local share = (count + 1) / weight
        local time = tonumber(redis.call('HGET', keys.vtime, tenant) or '0')
        if best == nil or share < bestShare or (share == bestShare and (time < bestTime
            or (time == bestTime and tenant < best))) then
          best, bestShare, bestTime = tenant, share, time
        end
      end
    end
  end
  return best, bestShare, bestTime
end

local function overShare(keys, queueBase, settings, cap, tenant)
  if cap == 0 or redis.call('HLEN', keys.active) < cap then
    return false
  end
  local best, bestShare = bestWaiting(keys, queueBase, settings)
  if best == nil or best == tenant then
    return false
  end
  local _, weight = settingsOf(settings, tenant)
  return tonumber(redis.call('HGET', keys.counts, tenant) or '0') / weight > bestShare
end

local function unadmit(keys, queueBase, settings, tenant, runId, score)
  redis.call('HDEL', keys.active, runId)
  if redis.call('HINCRBY', keys.counts, tenant, -1) <= 0 then
    redis.call('HDEL', keys.counts, tenant)
  end
  local _, weight = settingsOf(settings, tenant)
  local time = tonumber(redis.call('HGET', keys.vtime, tenant) or '0')
  redis.call('HSET', keys.vtime, tenant, string.format('%.17g', time - 1 / weight))
  redis.call('ZADD', queueBase .. tenant, 'NX', score, runId)
  redis.call('SADD', keys.waiting, tenant)
end

local function fill(keys, queueBase, settings, cap, bound)
  local admitted = {}
  while #admitted < bound do
    if cap > 0 and redis.call('HLEN', keys.active) >= cap then
      break
    end
    local best, _, bestTime = bestWaiting(keys, queueBase, settings)
    if best == nil then
      break
    end
    local runId = redis.call('ZRANGE', queueBase .. best, 0, 0)[1]
    redis.call('ZREM', queueBase .. best, runId)
    redis.call('HSET', keys.active, runId, best)
    redis.call('HINCRBY', keys.counts, best, 1)
    local _, weight = settingsOf(settings, best)
    redis.call('HSET', keys.vtime, best, string.format('%.17g', bestTime + 1 / weight),
      '_system', string.format('%.17g', bestTime))
    admitted[#admitted + 1] = runId
  end
  return admitted
end
