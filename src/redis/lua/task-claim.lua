--[[
  Claims a pending task for one call, atomically: of two calls claiming a task, exactly one wins. The winner
  running again (same claim key) finds its own claim and succeeds again.

  KEYS[1] tasks hash

  ARGV[1] task id
  ARGV[2] claim key: the idempotency key of the claiming call
  ARGV[3] assignee JSON {agent, run_id}
  ARGV[4] now (ISO time)

  Returns {'CLAIMED', taskJson} | {'NOT_FOUND'} | {'TAKEN', taskJson} (claimed by another call) |
    {'NOT_PENDING', taskJson} (completed or failed)
]]
--- @include "task-record"

local reply, text, task = taskToChange(KEYS[1], ARGV[1], 'claim_key', ARGV[2], 'CLAIMED')
if reply then
  return reply
end
if task['status'] ~= 'pending' then
  if task['assignee'] ~= cjson.null then
    return {'TAKEN', text}
  end
  return {'NOT_PENDING', text}
end
task['status'] = 'in_progress'
task['assignee'] = cjson.decode(ARGV[3])
task['claim_key'] = ARGV[2]
return {'CLAIMED', writeTask(KEYS[1], ARGV[1], task, ARGV[4])}
