--[[
  Forks a run (decision 0022): a new session whose chat starts as a copy of the first entries of the
  original's chat (a chat only grows, so they are as the caller read them), with the chat's context view when
  it summarises no more than the copy, and a new run that continues from there. The new session lives on the
  original's shard (its id is chosen so), which makes this one atomic write on one slot; the fork is also
  announced in the original session's log.

  KEYS[1]  the original session's events stream
  KEYS[2]  the original chat list
  KEYS[3]  the new session hash: record, active_run
  KEYS[4]  the new chat list
  KEYS[5]  the new chat's context view (string)
  KEYS[6]  the new session's events stream
  KEYS[7]  the new run's hash
  KEYS[8]  set of the new session's run ids
  KEYS[9]  the shard's sessions (retention: session hash key -> last activity, ms)
  KEYS[10] the shard's run index (base key; includes/run-index.lua)

  ARGV[1]  'create', or 'check' (as retry-run)
  ARGV[2]  the new session's record JSON
  ARGV[3]  the new run's id
  ARGV[4]  the new run's record JSON
  ARGV[5]  how many entries of the original chat to copy C
  ARGV[6]  the context view JSON to copy ('' = none)
  ARGV[7]  events stream max length (approximate trimming)
  ARGV[8]  the event for the original session's log (run_forked)
  ARGV[9]  number of chat entries M, then M entries (JSON), then the new session's events (JSON)

  Returns
    {'OK', eventId, ...}   ({'OK'} for a check)
    {'RUN_EXISTS'}         the new session or run exists already
    {'CONFLICT', 'chat'}   the original chat is shorter than the copy
]]
local rcall = redis.call

--- @include "append-entries"
--- @include "new-run"

local check = ARGV[1] == 'check'

if rcall('EXISTS', KEYS[3]) == 1 or rcall('EXISTS', KEYS[7]) == 1 or rcall('EXISTS', KEYS[4]) == 1 then
  return {'RUN_EXISTS'}
end
local copied = tonumber(ARGV[5])
if rcall('LLEN', KEYS[2]) < copied then
  return {'CONFLICT', 'chat'}
end
if check then
  return {'OK'}
end

-- In slices: one entry may be large, and unpack has a limit on how many values it takes.
local slice = 100
for from = 0, copied - 1, slice do
  local entries = rcall('LRANGE', KEYS[2], from, math.min(from + slice, copied) - 1)
  rcall('RPUSH', KEYS[4], unpack(entries))
end
if ARGV[6] ~= '' then
  rcall('SET', KEYS[5], ARGV[6])
end
rcall('HSET', KEYS[3], 'record', ARGV[2], 'active_run', ARGV[3])
startRun(KEYS[7], ARGV[4], KEYS[8], ARGV[3], KEYS[9], KEYS[3], KEYS[10])
rcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[7], '*', 'event', ARGV[8])

return appendEntries(KEYS[4], KEYS[6], ARGV[7], 9)
