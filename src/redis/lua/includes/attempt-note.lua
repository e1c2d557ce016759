--[[
  noteAttempt(journalKey, field, noteJson, keep)
    Appends one execution of a step job to its attempts record (journal field attempts:<job id>), with why it
    ran, judged against the execution before it: 'first'; 'wake' when that one parked the step; 'retry' when
    BullMQ's attempt number went up (that one failed); else 'takeover' (it ended without committing, failing
    or parking). Keeps the latest `keep` executions; `count` counts them all. noteJson = '' does nothing.
  noteParked(journalKey, field, parkedAt, wakeAt)
    Marks the latest execution of the record as parked (it waits until wakeAt at the latest; '' = no
    time). field nil or '' (a caller without a record) does nothing.
]]
local function noteAttempt(journalKey, field, noteJson, keep)
  if noteJson == '' then
    return
  end
  local note = cjson.decode(noteJson)
  local current = redis.call('HGET', journalKey, field)
  local record
  if current then
    record = cjson.decode(current)
  else
    record = {v = 1, count = 0, attempts = {}}
  end
  local attempts = record['attempts']
  local previous = attempts[#attempts]
  if not previous then
    note['cause'] = 'first'
  elseif previous['parked_at'] then
    note['cause'] = 'wake'
  elseif note['attempt'] > previous['attempt'] then
    note['cause'] = 'retry'
  else
    note['cause'] = 'takeover'
  end
  attempts[#attempts + 1] = note
  while #attempts > keep do
    table.remove(attempts, 1)
  end
  record['count'] = record['count'] + 1
  redis.call('HSET', journalKey, field, cjson.encode(record))
end

local function noteParked(journalKey, field, parkedAt, wakeAt)
  if not field or field == '' then
    return
  end
  local current = redis.call('HGET', journalKey, field)
  if not current then
    return
  end
  local record = cjson.decode(current)
  local latest = record['attempts'][#record['attempts']]
  if latest then
    latest['parked_at'] = parkedAt
    if wakeAt ~= '' then
      latest['wake_at'] = wakeAt
    end
    redis.call('HSET', journalKey, field, cjson.encode(record))
  end
end
