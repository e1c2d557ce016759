--[[
  readTask(tasksKey, taskId)             -> text, task (the stored JSON and its decoded table),
                                            or nil when the board has no such task
  writeTask(tasksKey, taskId, task, now) -> the task's new JSON, stored with updated_at = now
  taskToChange(tasksKey, taskId, keyField, callKey, doneCode)
                                         -> nil, text, task when the call may change the task; else its
                                            reply: {'NOT_FOUND'}, or {doneCode, text} when the task's
                                            `keyField` is this call's key (a rerun of the call)
]]
local function readTask(tasksKey, taskId)
  local text = redis.call('HGET', tasksKey, taskId)
  if not text then
    return nil
  end
  return text, cjson.decode(text)
end

local function writeTask(tasksKey, taskId, task, now)
  task['updated_at'] = now
  local text = cjson.encode(task)
  redis.call('HSET', tasksKey, taskId, text)
  return text
end

local function taskToChange(tasksKey, taskId, keyField, callKey, doneCode)
  local text, task = readTask(tasksKey, taskId)
  if not text then
    return {'NOT_FOUND'}
  end
  if task[keyField] == callKey then
    return {doneCode, text}
  end
  return nil, text, task
end
