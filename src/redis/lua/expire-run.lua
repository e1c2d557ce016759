--[[
  Removes a finished run whose retention ran out: its record, journal, children set, tree usage sums, and its
  own chat with that chat's view when it is not the session's main chat (a child run's or a team member's).
  Nothing an unfinished run needs goes: while the run's root is not finished, the run is kept and looked at
  again one retention window later.

  KEYS[1] run hash
  KEYS[2] journal hash
  KEYS[3] children set
  KEYS[4] tree usage hash
  KEYS[5] the root run's hash (KEYS[1] for a root run)
  KEYS[6] the session's set of run ids
  KEYS[7] the shard's finished runs (retention index)
  KEYS[8] the run's own chat (KEYS[1] when the run works on the session's main chat)
  KEYS[9] that chat's view (KEYS[1] likewise)
  KEYS[10] the shard's run index (base key; includes/run-index.lua): the run leaves it too
  KEYS[11] the run's waits hash (decision 0033)
  KEYS[12] the run's signals list

  ARGV[1] run id
  ARGV[2] cutoff: runs that finished at or before this time (ms, Redis clock) are due

  Returns 'EXPIRED' | 'NOT_DUE' | 'KEPT' (its root is not finished) | 'GONE' (nothing left to remove)
]]
local rcall = redis.call

--- @include "run-status"
--- @include "retention-index"
--- @include "run-index"

local notDue = retentionDue(KEYS[7], ARGV[1], ARGV[2])
if notDue then
  return notDue
end
local record = rcall('HGET', KEYS[1], 'record')
if record and not isFinished(runStatus(record)) then
  -- Never in the index while running; kept all the same, in case.
  rcall('ZREM', KEYS[7], ARGV[1])
  return 'KEPT'
end
if KEYS[5] ~= KEYS[1] then
  local root = rcall('HGET', KEYS[5], 'record')
  if root and not isFinished(runStatus(root)) then
    lookAgainLater(KEYS[7], ARGV[1])
    return 'KEPT'
  end
end
rcall('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[11], KEYS[12])
if KEYS[8] ~= KEYS[1] then
  rcall('UNLINK', KEYS[8], KEYS[9])
end
rcall('SREM', KEYS[6], ARGV[1])
rcall('ZREM', KEYS[7], ARGV[1])
unindexRun(KEYS[10], ARGV[1])
if record then
  return 'EXPIRED'
end
return 'GONE'
