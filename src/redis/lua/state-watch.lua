--[[
  One look of a state_watch call at its key. When the key is set, its value. Otherwise the call's step is
  listed as a watcher of the key (state-set hands it back to be woken) until the call's deadline, which is
  fixed by the call's first look: every execution of the call waits for the same moment.

  KEYS[1] state hash
  KEYS[2] state watchers hash
  KEYS[3] watch deadlines hash

  ARGV[1] state key
  ARGV[2] job id of the watching step
  ARGV[3] idempotency key of the call
  ARGV[4] the deadline if this is the call's first look (ms since the epoch)
  ARGV[5] now (ms since the epoch)

  Returns {'FOUND', valueJson} | {'TIMED_OUT'} | {'WAIT', deadline}
]]
local rcall = redis.call

local function watchersOf()
  local text = rcall('HGET', KEYS[2], ARGV[1])
  if not text then
    return {}
  end
  return cjson.decode(text)
end

local function removeWatcher()
  local kept = {}
  for _, jobId in ipairs(watchersOf()) do
    if jobId ~= ARGV[2] then
      table.insert(kept, jobId)
    end
  end
  if #kept == 0 then
    rcall('HDEL', KEYS[2], ARGV[1])
  else
    rcall('HSET', KEYS[2], ARGV[1], cjson.encode(kept))
  end
end

rcall('HSETNX', KEYS[3], ARGV[3], ARGV[4])
local deadline = rcall('HGET', KEYS[3], ARGV[3])
local value = rcall('HGET', KEYS[1], ARGV[1])
if value then
  removeWatcher()
  return {'FOUND', value}
end
if tonumber(ARGV[5]) >= tonumber(deadline) then
  removeWatcher()
  return {'TIMED_OUT'}
end
local watchers = watchersOf()
for _, jobId in ipairs(watchers) do
  if jobId == ARGV[2] then
    return {'WAIT', deadline}
  end
end
table.insert(watchers, ARGV[2])
rcall('HSET', KEYS[2], ARGV[1], cjson.encode(watchers))
return {'WAIT', deadline}
