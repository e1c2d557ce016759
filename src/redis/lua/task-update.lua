--[[
  Changes a task's status, with a note. A claimed task may be changed only by the run that claimed it;
  `pending` releases the claim; `in_progress` is reached by claiming, not here. The same call running
  again (same update key) finds its update made and changes nothing.

  KEYS[1] tasks hash

  ARGV[1] task id
  ARGV[2] new status: pending, completed or failed (in_progress only to keep a claimed task so)
  ARGV[3] note ('' = none)
  ARGV[4] who updates, JSON {agent, run_id}
  ARGV[5] run id of the caller
  ARGV[6] update key: the idempotency key of the call
  ARGV[7] now (ISO time)

  Returns {'OK', taskJson} | {'NOT_FOUND'} | {'NOT_YOURS', taskJson} | {'NOT_CLAIMED', taskJson}
]]
--- @include "task-record"

local reply, text, task = taskToChange(KEYS[1], ARGV[1], 'update_key', ARGV[6], 'OK')
if reply then
  return reply
end
local assignee = task['assignee']
if assignee ~= cjson.null and assignee['run_id'] ~= ARGV[5] then
  return {'NOT_YOURS', text}
end
if ARGV[2] == 'in_progress' and assignee == cjson.null then
  return {'NOT_CLAIMED', text}
end
task['status'] = ARGV[2]
if ARGV[3] ~= '' then
  task['note'] = ARGV[3]
end
if ARGV[2] == 'pending' then
  task['assignee'] = cjson.null
  task['claim_key'] = cjson.null
end
task['updated_by'] = cjson.decode(ARGV[4])
task['update_key'] = ARGV[6]
return {'OK', writeTask(KEYS[1], ARGV[1], task, ARGV[7])}
