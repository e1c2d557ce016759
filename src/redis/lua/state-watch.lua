--[[
  One look of a state_watch call at its key. When the key is set, its value. Otherwise the call's step is
  listed as a watcher of the key (state-set hands it back to be woken) until the call's deadline, which is
  fixed by the call's first look: every execution of the call waits for the same moment.

  A key's watchers are a JSON array of {job, deadline}. Each look drops the watchers whose deadline has passed:
  a step that will not look again (its run was cancelled) is not listed for longer than it would have waited.
  (Entries that are bare job ids, written before deadlines were kept, stay until the key is set.)

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

local now = tonumber(ARGV[5])

-- The key's watchers, without this call's step and without those whose deadline has passed.
local function otherLiveWatchers()
  local text = rcall('HGET', KEYS[2], ARGV[1])
  local kept = {}
  if not text then
    return kept
  end
  for _, watcher in ipairs(cjson.decode(text)) do
    if type(watcher) == 'string' then
      if watcher ~= ARGV[2] then
        table.insert(kept, watcher)
      end
    elseif watcher.job ~= ARGV[2] and tonumber(watcher.deadline) > now then
      table.insert(kept, watcher)
    end
  end
  return kept
end

local function saveWatchers(watchers)
  if #watchers == 0 then
    rcall('HDEL', KEYS[2], ARGV[1])
  else
    rcall('HSET', KEYS[2], ARGV[1], cjson.encode(watchers))
  end
end

rcall('HSETNX', KEYS[3], ARGV[3], ARGV[4])
local deadline = rcall('HGET', KEYS[3], ARGV[3])
local value = rcall('HGET', KEYS[1], ARGV[1])
local watchers = otherLiveWatchers()
if value then
  saveWatchers(watchers)
  return {'FOUND', value}
end
if now >= tonumber(deadline) then
  saveWatchers(watchers)
  return {'TIMED_OUT'}
end
table.insert(watchers, {job = ARGV[2], deadline = tonumber(deadline)})
saveWatchers(watchers)
return {'WAIT', deadline}
