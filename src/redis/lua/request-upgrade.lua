--[[
  Asks that a run move to its workers' current definition at its next iteration (POST /v1/runs/:id/upgrade,
  decision 0030): the time of the request goes into the run's journal, which the next iteration reads with
  the rest of its load; that iteration decides, and commits its decision with its reply, once.

  KEYS[1] run hash
  KEYS[2] journal hash

  ARGV[1] journal field (upgrade-request)
  ARGV[2] when it was asked (ISO time)

  Returns {'OK'}, {'NO_RUN'}, {'FINISHED', status} or {'NO_DEFINITION'} (a run recorded before definitions were)
]]
local record = redis.call('HGET', KEYS[1], 'record')
if not record then return {'NO_RUN'} end
local run = cjson.decode(record)
if run.status == 'completed' or run.status == 'failed' or run.status == 'cancelled' then
  return {'FINISHED', run.status}
end
if type(run.definition) ~= 'table' then return {'NO_DEFINITION'} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return {'OK'}
