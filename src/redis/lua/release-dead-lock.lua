--[[
  Releases the lock a dead worker process held on a step job, so the job is taken over at once instead of when
  the lock expires: only while the lock still holds the dead worker's token (a lock a live worker took since
  is never touched). The job is marked as stalled and BullMQ's stalled-check guard is cleared, so the next
  stalled check (the caller runs one at once) moves it back to wait.

  KEYS[1] the job's lock
  KEYS[2] the queue's stalled set
  KEYS[3] the queue's stalled-check guard

  ARGV[1] the dead worker's lock token
  ARGV[2] job id

  Returns 1 when released, 0 when the lock is not the dead worker's (any more)
]]
local rcall = redis.call

if rcall('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
rcall('DEL', KEYS[1])
rcall('SADD', KEYS[2], ARGV[2])
rcall('DEL', KEYS[3])
return 1
