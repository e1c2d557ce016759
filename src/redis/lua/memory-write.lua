--[[
  Writes (or deletes) a note of an agent's or the deployment's memory (the `memory` toolbox), once per tool
  call: a call that runs again after a crash finds its call key recorded and changes nothing. Notes past
  their expiry are dropped first; a new note is refused when the memory holds the most notes it may, and any
  write when the notes' bytes would pass the cap.

  KEYS[1] notes hash (name -> note JSON)
  KEYS[2] expiry sorted set (name scored by expiry, ms)
  KEYS[3] applied calls sorted set (call key scored by when it was applied, ms)

  ARGV[1] note name
  ARGV[2] note JSON ('' deletes the note)
  ARGV[3] call key
  ARGV[4] now, ms
  ARGV[5] expiry of the note, ms (now + retention)
  ARGV[6] most notes
  ARGV[7] most bytes of all notes together
  ARGV[8] retention, ms (how long the keys and applied calls are kept)

  Returns {'OK'} | {'REPEATED'} | {'FULL', count} | {'TOO_BIG', bytes} | {'NOT_FOUND'}
]]
local notes, expiry, calls = KEYS[1], KEYS[2], KEYS[3]
local name, json, callKey = ARGV[1], ARGV[2], ARGV[3]
local now, expiresAt = tonumber(ARGV[4]), tonumber(ARGV[5])
local mostNotes, mostBytes, retention = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])

if redis.call('ZSCORE', calls, callKey) then
  return {'REPEATED'}
end

local expired = redis.call('ZRANGEBYSCORE', expiry, '-inf', now)
for _, old in ipairs(expired) do
  redis.call('HDEL', notes, old)
  redis.call('ZREM', expiry, old)
end

if json == '' then
  if redis.call('HDEL', notes, name) == 0 then
    return {'NOT_FOUND'}
  end
  redis.call('ZREM', expiry, name)
else
  local exists = redis.call('HEXISTS', notes, name) == 1
  if not exists then
    local count = redis.call('HLEN', notes)
    if count >= mostNotes then
      return {'FULL', tostring(count)}
    end
  end
  local bytes = string.len(json)
  for _, field in ipairs(redis.call('HKEYS', notes)) do
    if field ~= name then
      bytes = bytes + redis.call('HSTRLEN', notes, field)
    end
  end
  if bytes > mostBytes then
    return {'TOO_BIG', tostring(bytes)}
  end
  redis.call('HSET', notes, name, json)
  redis.call('ZADD', expiry, expiresAt, name)
end

-- The calls applied within the retention window, at most a thousand: enough to recognise a repeat.
redis.call('ZADD', calls, now, callKey)
redis.call('ZREMRANGEBYSCORE', calls, '-inf', now - retention)
redis.call('ZREMRANGEBYRANK', calls, 0, -1001)
for _, key in ipairs({notes, expiry, calls}) do
  if redis.call('EXISTS', key) == 1 then
    redis.call('PEXPIRE', key, retention)
  end
end
return {'OK'}
