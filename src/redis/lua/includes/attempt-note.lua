--[[
  noteAttempt(journalKey, field, noteJson, keep)
    Appends one execution of a step job to its attempts record (journal field attempts:<job id>), with why it
    ran, judged against the execution before it: 'first'; 'wake' when that one parked the step; 'retry' when
    BullMQ's attempt number went up (that one failed); else 'takeover' (it ended without committing, failing
    or parking). An execution is noted once: a note whose `started` (BullMQ's count of takes, one per
    execution) is the latest note's changes nothing. Keeps the latest `keep` executions; `count` counts them
    all. field or noteJson nil or '' does nothing.
  attemptsWithNote(current, noteJson, keep)
    What noteAttempt writes, for a caller that read the record (current: its JSON, nil or false: none) and
    writes it with its own command: the record's new JSON, or nil when nothing changes.
  noteParked(journalKey, field, parkedAt, wakeAt, noteJson, keep)
    Notes the execution (noteAttempt: it may park before its first script noted it, as a call waiting for
    its approval does), then marks the latest note parked: it waits until wakeAt at the latest ('' = no
    time). field nil or '' (a caller without a record) does nothing.
]]
local function attemptsWithNote(current, noteJson, keep)
  if not noteJson or noteJson == '' then
    return nil
  end
  local note = cjson.decode(noteJson)
  local record
  if current then
    record = cjson.decode(current)
  else
    record = {v = 1, count = 0, attempts = {}}
  end
  local attempts = record['attempts']
  local previous = attempts[#attempts]
  if previous and previous['started'] == note['started'] then
    return nil
  end
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
  return cjson.encode(record)
end

local function noteAttempt(journalKey, field, noteJson, keep)
  if not field or field == '' or not noteJson or noteJson == '' then
    return
  end
  local noted = attemptsWithNote(redis.call('HGET', journalKey, field), noteJson, keep)
  if noted then
    redis.call('HSET', journalKey, field, noted)
  end
end

local function noteParked(journalKey, field, parkedAt, wakeAt, noteJson, keep)
  if not field or field == '' then
    return
  end
  noteAttempt(journalKey, field, noteJson, tonumber(keep or '8'))
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
