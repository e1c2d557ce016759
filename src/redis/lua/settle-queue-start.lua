--[[
  Takes a session off the shard's queue starts when there is nothing to start (decision 0032): it has an
  active run again (whose end marks it anew) or an empty queue. Atomic with the scripts that mark it, so no
  mark a finished run made is lost.

  KEYS[1] session hash: active_run
  KEYS[2] the session's queued messages (list)
  KEYS[3] the shard's queue starts (sorted set: session hash key -> ms)

  Returns 'SETTLED' (taken off) | 'PENDING' (idle with messages queued: a run is to start)
]]
if redis.call('HEXISTS', KEYS[1], 'active_run') == 1 or redis.call('LLEN', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[3], KEYS[1])
  return 'SETTLED'
end
return 'PENDING'
