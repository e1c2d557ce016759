--[[
  completeStepJob(keyFrom)
    Completes the step's own job in its commit's call (decision 0056), with BullMQ's own moveToFinished
    (included from the BullMQ this process runs): the job leaves the active list for the completed set with
    its return value, BullMQ's 'completed' event is added, and the next waiting job is moved to active for
    this worker when the worker asked for it (fetch-next), as BullMQ's worker does when a processor returns.
    BullMQ checks the job's lock token itself (after the commit's own check).
    Asked for when KEYS has BullMQ's 14 keys from keyFrom (moveToFinished's KEYS[1..14]); then the last 8
    ARGV are its ARGV[1..8] (see lastArgOfCommit). Returns moveToFinished's reply (the next job, 0, or its
    error code), or nil when not asked.
]]
--- @include-bullmq-command "moveToFinished-14" as bullmqMoveToFinished
local completionArgs = 8

--- The caller's last ARGV of its own: the ones after it are the completion's.
local function lastArgOfCommit(keyFrom)
  if #KEYS >= keyFrom + 13 then
    return #ARGV - completionArgs
  end
  return #ARGV
end

local function completeStepJob(keyFrom)
  if #KEYS < keyFrom + 13 then
    return nil
  end
  return bullmqMoveToFinished({unpack(KEYS, keyFrom, keyFrom + 13)},
    {unpack(ARGV, #ARGV - completionArgs + 1, #ARGV)})
end
