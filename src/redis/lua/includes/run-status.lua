--[[
  runStatus(recordJson) -> the status field of a run record
  isFinished(status)    -> true for completed, failed, cancelled
]]
local function runStatus(recordJson)
  return cjson.decode(recordJson)['status']
end

local function isFinished(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
