--[[
  Commits what one step did, atomically, only while the worker still holds the step's job lock (fencing).
  A step that runs again finds its journal field and gets DONE: every effect happens once.

  KEYS[1] job lock key (BullMQ's <queue>:<jobId>:lock)
  KEYS[2] run hash: record (JSON), rev
  KEYS[3] journal hash
  KEYS[4] chat list (may be any key when no message is appended)
  KEYS[5] events stream
  KEYS[6] session hash: active_run
  KEYS[7] session usage hash (sums of every run of the session)
  KEYS[8] agent usage hash of this shard (sums of every run of the agent on the shard); KEYS[7] = none
  KEYS[9] usage hash of the run's tree, on its root run (for the root's run budget); KEYS[2] = none
  KEYS[10] the chat's context view (what the model is sent of it: the summary; see context-view.ts)
  KEYS[11] the shard's finished runs (sorted set: run id -> when it finished, ms; retention)
  KEYS[12] the shard's sessions (sorted set: session hash key -> last activity, ms; retention)
  KEYS[13] the shard's run index (base key; includes/run-index.lua)
  KEYS[14] the run's steered messages (list; includes/release-session.lua)
  KEYS[15] the session's queued messages (list)
  KEYS[16] the shard's queue starts (sorted set)
  KEYS[17] the shard's step queue: BullMQ's wait list
  KEYS[18] ... its meta hash
  KEYS[19] ... its active list
  KEYS[20] ... its events stream
  KEYS[21] ... its marker
  KEYS[22..] BullMQ's moveToFinished keys (14) when the commit completes its own job (decision 0056;
             includes/complete-step-job.lua); absent: the worker completes it after the commit

  ARGV[1]  lock token ('' = do not check: a caller outside a job)
  ARGV[2]  journal field that marks this commit
  ARGV[3]  journal value
  ARGV[4]  expected run rev ('' = do not check)
  ARGV[5]  new run record JSON ('' = unchanged)
  ARGV[6]  expected chat length before the append ('' = do not check)
  ARGV[7]  run id
  ARGV[8]  '1' when the new record finishes the run: the session's active run is released, and the run's
           unread steered messages queued (releaseSession)
  ARGV[9]  events stream max length (approximate trimming)
  ARGV[10] usage to add to the sums: "field=amount,field=amount" ('' = none)
  ARGV[11] the chat's new context view (JSON; '' = unchanged)
  ARGV[12] the step queue's job key prefix (<prefix><job id> is a job's hash)
  ARGV[13] the next step jobs, added with the commit (includes/add-step-job.lua; '' = none)
  ARGV[14] number of chat entries M
  ARGV[15 .. 14+M]   chat entries (JSON)
  ARGV[15+M .. ] events (JSON), up to the last ARGV, or up to the completion's 8 ARGV when KEYS[22..] are
                  given (BullMQ's moveToFinished ARGV[1..8]: the job id, the time, 'returnvalue', the
                  return value, 'completed', fetch-next, the queue key prefix, the packed options)

  Returns
    {'OK', eventId, ..., completion}   completion: BullMQ's moveToFinished reply, only when KEYS[22..] asked
    {'DONE', journalValue}    this commit was made before (a retried step)
    {'LOCK_LOST'}             the job's lock is gone or held by another worker
    {'NO_RUN'}
    {'RUN_FINISHED', status}  the run is completed, failed or cancelled: nothing more may change it
    {'CONFLICT', what}        the run record or the chat changed since the step read them
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "append-entries"
--- @include "retention-index"
--- @include "run-index"
--- @include "release-session"
--- @include "add-step-job"
--- @include "complete-step-job"
local refused, rev = stepGuards(KEYS[1], ARGV[1], KEYS[3], ARGV[2], KEYS[2])
if refused then
  return refused
end

if ARGV[4] ~= '' and rev ~= ARGV[4] then
  return {'CONFLICT', 'run'}
end

if ARGV[6] ~= '' and rcall('LLEN', KEYS[4]) ~= tonumber(ARGV[6]) then
  return {'CONFLICT', 'chat'}
end

-- Before the run's own events: its terminal event stays its last.
if ARGV[8] == '1' then
  releaseSession(KEYS[6], ARGV[7], KEYS[14], KEYS[15], KEYS[16], KEYS[5], ARGV[9], ARGV[5])
end

local result = appendEntries(KEYS[4], KEYS[5], ARGV[9], 14, lastArgOfCommit(22))

if ARGV[11] ~= '' then
  rcall('SET', KEYS[10], ARGV[11])
end

rcall('HSET', KEYS[3], ARGV[2], ARGV[3])

for field, amount in string.gmatch(ARGV[10], '([%w_]+)=([%d.eE+-]+)') do
  rcall('HINCRBYFLOAT', KEYS[7], field, amount)
  if KEYS[8] ~= KEYS[7] then
    rcall('HINCRBYFLOAT', KEYS[8], field, amount)
  end
  if KEYS[9] ~= KEYS[2] then
    rcall('HINCRBYFLOAT', KEYS[9], field, amount)
  end
end

if ARGV[5] ~= '' then
  -- The rev stepGuards read, moved on in the same write as the record.
  rcall('HSET', KEYS[2], 'record', ARGV[5], 'rev', (tonumber(rev) or 0) + 1)
  indexRun(KEYS[13], ARGV[7], ARGV[5])
end

if ARGV[8] == '1' then
  markFinished(KEYS[11], KEYS[12], ARGV[7], KEYS[6])
end

addStepJobs({wait = KEYS[17], meta = KEYS[18], active = KEYS[19], events = KEYS[20], marker = KEYS[21],
  prefix = ARGV[12]}, ARGV[13])

-- The commit's last write: the job's completion, after the jobs it adds (so fetch-next can take them).
local completed = completeStepJob(22)
if completed ~= nil then
  result[#result + 1] = completed
end
return result
