--[[
  addStepJobs(queueKeys, jobs)
    Adds the step jobs a commit names to its shard's step queue, in the commit's call (issue 37: no round
    trip of its own), the way BullMQ's addStandardJob does for a job with its own id, no parent, no delay
    and no priority, with BullMQ's own functions (included from the BullMQ this process runs): the job
    hash, the 'added' and 'waiting' events, the wait list and the queue's marker. A job that exists already
    (a step that ran again) is left as it is, with BullMQ's 'duplicated' event.
    queueKeys  {wait, meta, active, events, marker, prefix}: the queue's keys (KEYS of the caller) and the
               prefix its job hashes are named with (<prefix><job id>)
    jobs       JSON array of {id, name, data (JSON), opts (BullMQ's stored options, JSON), timestamp};
               '' = none
]]
--- @include-bullmq "addJobInTargetList"
--- @include-bullmq "getOrSetMaxEvents"
--- @include-bullmq "isQueuePausedOrMaxed"
--- @include-bullmq "storeJob"
local function addStepJobs(queueKeys, jobs)
  if jobs == '' then
    return
  end
  local maxEvents = getOrSetMaxEvents(queueKeys.meta)
  for _, job in ipairs(cjson.decode(jobs)) do
    local jobKey = queueKeys.prefix .. job.id
    if redis.call('EXISTS', jobKey) == 1 then
      redis.call('XADD', queueKeys.events, 'MAXLEN', '~', maxEvents, '*', 'event', 'duplicated', 'jobId', job.id)
    else
      storeJob(queueKeys.events, jobKey, job.id, job.name, job.data, cjson.decode(job.opts), job.timestamp)
      addJobInTargetList(queueKeys.wait, queueKeys.marker, 'LPUSH',
        isQueuePausedOrMaxed(queueKeys.meta, queueKeys.active), job.id)
      redis.call('XADD', queueKeys.events, 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', job.id)
    end
  end
end
