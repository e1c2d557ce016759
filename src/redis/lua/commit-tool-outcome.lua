--[[
  Records the outcome of one tool call of iteration n (the ledger's second half), fenced like commit-step.
  The call's chat entry waits in the journal; the commit that completes the batch (the last of the
  iteration's calls to finish) appends every entry to the chat in call order, with their message_added
  events, and marks the results of iteration n as appended. Exactly one commit can complete a batch.

  KEYS[1] the job's lock (the write is fenced by its token)
  KEYS[2] the run's hash
  KEYS[3] the run's journal, where outcomes and waiting entries are kept
  KEYS[4] the chat the batch's results go to
  KEYS[5] the session's events
  KEYS[6] the shard's step queue: BullMQ's wait list
  KEYS[7] ... its meta hash
  KEYS[8] ... its active list
  KEYS[9] ... its events stream
  KEYS[10] ... its marker
  KEYS[11..] BullMQ's moveToFinished keys (14) when the commit completes its own job (decision 0056;
             includes/complete-step-job.lua); absent: the worker completes it after the commit

  ARGV[1]  lock token
  ARGV[2]  journal field of this outcome            (tool:<n>:<k>:outcome)
  ARGV[3]  outcome JSON
  ARGV[4]  events stream max length
  ARGV[5]  journal field of the batch               (results:<n>)
  ARGV[6]  this call's index k (0-based)
  ARGV[7]  number of calls in the batch K
  ARGV[8]  chat length the batch must find (position of the reply + 1)
  ARGV[9]  this call's chat entry JSON
  ARGV[10] this call's message_added event JSON (its index is ARGV[8] + k)
  ARGV[11] number of events to add now E
  ARGV[12 .. 11+E]          the events (tool_call_end, and tool_call_start when the call never started)
  ARGV[12+E .. 11+E+K]      journal fields of the batch's waiting chat entries, in call order (tool:<n>:<k>:entry)
  ARGV[12+E+K .. 11+E+2K]   journal fields of their waiting message_added events (tool:<n>:<k>:added)
  ARGV[12+E+2K]             the step queue's job key prefix (<prefix><job id> is a job's hash)
  ARGV[13+E+2K]             the next iteration's job, added by the commit that completes the batch
                            (includes/add-step-job.lua; '' = none)
  ARGV[14+E+2K .. 21+E+2K]  BullMQ's moveToFinished ARGV[1..8] when KEYS[11..] are given (completion)

  Returns the replies of stepGuards, or {'OK', batch, eventId...} where batch is '1' when this commit
  appended the batch, '2' when it completed the batch but the chat had moved (nothing appended), else '0';
  when KEYS[11..] asked, BullMQ's moveToFinished reply follows the event ids (its last element).
  The commit that completes the batch is the one that adds the next iteration (in this call when ARGV names
  its job, else its step adds it after).
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "webhook-outbox"
--- @include "add-step-job"
--- @include "complete-step-job"
local index = tonumber(ARGV[6])
local count = tonumber(ARGV[7])
local eventCount = tonumber(ARGV[11])
-- One read of the journal: this outcome (a retried step finds it), the batch's mark, and the batch's waiting
-- entries and their events, in call order.
local readFields = {ARGV[2], ARGV[5]}
local entryFields, addedFields = {}, {}
for k = 1, count do
  entryFields[k] = ARGV[11 + eventCount + k]
  addedFields[k] = ARGV[11 + eventCount + count + k]
  readFields[2 + k] = entryFields[k]
  readFields[2 + count + k] = addedFields[k]
end
local refused = lockHeld(KEYS[1], ARGV[1])
if refused then
  return refused
end
local read = rcall('HMGET', KEYS[3], unpack(readFields))
if read[1] then
  return {'DONE', read[1]}
end
refused = runOpen(KEYS[2])
if refused then
  return refused
end

local function addNextIteration()
  addStepJobs({wait = KEYS[6], meta = KEYS[7], active = KEYS[8], events = KEYS[9], marker = KEYS[10],
    prefix = ARGV[12 + eventCount + 2 * count]}, ARGV[13 + eventCount + 2 * count])
end
-- The outcome, with this call's chat entry and its event waiting in the journal for the batch.
local function recordWaiting()
  rcall('HSET', KEYS[3], ARGV[2], ARGV[3], entryFields[index + 1], ARGV[9], addedFields[index + 1], ARGV[10])
end

-- Every commit that records the outcome is the step's last write: it completes the job when asked.
local function completing(result)
  local completed = completeStepJob(11)
  if completed ~= nil then
    result[#result + 1] = completed
  end
  return result
end

local result = {'OK', '0'}
for event = 12, 11 + eventCount do
  local eventId = rcall('XADD', KEYS[5], 'MAXLEN', '~', ARGV[4], '*', 'event', ARGV[event])
  noteForWebhooks(KEYS[5], eventId, ARGV[event])
  result[#result + 1] = eventId
end

if read[2] then
  recordWaiting()
  return completing(result)
end
local entries, added = {}, {}
for k = 1, count do
  if k == index + 1 then
    entries[k] = ARGV[9]
    added[k] = ARGV[10]
  else
    entries[k] = read[2 + k]
    added[k] = read[2 + count + k]
  end
  if not entries[k] then
    recordWaiting()
    return completing(result)
  end
end
if rcall('LLEN', KEYS[4]) ~= tonumber(ARGV[8]) then
  -- Complete, but the chat moved: the next iteration appends what the journal holds (its fallback).
  recordWaiting()
  result[2] = '2'
  addNextIteration()
  return completing(result)
end
rcall('RPUSH', KEYS[4], unpack(entries))
for k = 1, count do
  local eventId = rcall('XADD', KEYS[5], 'MAXLEN', '~', ARGV[4], '*', 'event', added[k])
  noteForWebhooks(KEYS[5], eventId, added[k])
  result[#result + 1] = eventId
end
-- This call's entry never waits: only the other calls' entries are taken off the journal.
rcall('HSET', KEYS[3], ARGV[2], ARGV[3], ARGV[5], cjson.encode({v = 1, index = tonumber(ARGV[8]), count = count}))
if count > 1 then
  local waitingFields = {}
  for k = 1, count do
    if k ~= index + 1 then
      waitingFields[#waitingFields + 1] = entryFields[k]
      waitingFields[#waitingFields + 1] = addedFields[k]
    end
  end
  rcall('HDEL', KEYS[3], unpack(waitingFields))
end
addNextIteration()
result[2] = '1'
return completing(result)
