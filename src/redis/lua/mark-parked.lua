--[[
  Marks a step as parked in its run's journal (it waits in the delayed set for an answer, child runs, a state
  key or a rate limit), fenced like commit-step: a worker that no longer holds the job's lock writes nothing,
  so a zombie cannot make a later crash's rerun look like a wake-up.

  KEYS[1] job lock key
  KEYS[2] journal hash

  ARGV[1] lock token
  ARGV[2] journal field (parked:<job id>)
  ARGV[3] value (the time the step is to wake, ms since the epoch)
  ARGV[4] the step's attempts field (attempts:<job id>): its latest execution is marked parked
  ARGV[5] when it parked (ISO time)
  ARGV[6] when it wakes at the latest (ISO time)
  ARGV[7] this execution's attempt note (JSON; '' = none): noted first when no script has noted it yet
  ARGV[8] how many notes the record keeps

  Returns {'OK'} or {'LOCK_LOST'}
]]
--- @include "step-guards"
--- @include "attempt-note"

local refused = lockHeld(KEYS[1], ARGV[1])
if refused then
  return refused
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
noteParked(KEYS[2], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
return {'OK'}
