--[[
  readTask(tasksKey, taskId)             -> text, task (the stored JSON and its decoded table),
                                            or nil when the board has no such task
  writeTask(tasksKey, taskId, task, now) -> the task's new JSON, stored with updated_at = now
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
