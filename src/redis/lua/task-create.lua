--[[
  Creates a task on a session's board (the `tasks` toolbox), once per call: a call that runs again with the
  same idempotency key gets the task it created.

  KEYS[1] tasks hash
  KEYS[2] task index hash: `seq`, `created:<idempotency key>`

  ARGV[1] idempotency key of the call
  ARGV[2] task JSON without its id (the script numbers the task)
  ARGV[3] most tasks the board may hold

  Returns {'CREATED', id, taskJson} | {'EXISTS', id, taskJson} | {'FULL', count}
]]
local rcall = redis.call

local field = 'created:' .. ARGV[1]
local existing = rcall('HGET', KEYS[2], field)
if existing then
  return {'EXISTS', existing, rcall('HGET', KEYS[1], existing)}
end
local count = rcall('HLEN', KEYS[1])
if count >= tonumber(ARGV[3]) then
  return {'FULL', tostring(count)}
end
local id = tostring(rcall('HINCRBY', KEYS[2], 'seq', 1))
local task = cjson.decode(ARGV[2])
task['id'] = id
local text = cjson.encode(task)
rcall('HSET', KEYS[1], id, text)
rcall('HSET', KEYS[2], field, id)
return {'CREATED', id, text}
