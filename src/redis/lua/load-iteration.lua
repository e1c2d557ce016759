--[[
  Reads what an iteration step needs, in one command: the run, its journal fields, and the chat from a
  position on (the worker holds the entries before it: a chat only grows). Notes the execution in the step's
  attempts record on the way (decision 0019), when the run exists: no extra round trip. Counts the model call
  this execution is about to make (decision 0054) when asked to, the run exists and the iteration's reply is
  not recorded (the first journal field): the worker takes the count back if it ends without the call.

  KEYS[1] run hash
  KEYS[2] journal hash
  KEYS[3] chat list
  KEYS[4] the chat's context view (the summary the model is sent in place of the entries it covers)
  KEYS[5] the run's steered messages (list, decision 0032)

  ARGV[1]    first chat position to return
  ARGV[2]    the step's attempts field (attempts:<job id>)
  ARGV[3]    this execution's attempt note (JSON; '' = none)
  ARGV[4]    how many notes the record keeps
  ARGV[5]    the iteration's model call counter to count this execution's call in (calls:<n>; '' = none;
             read with the journal fields when it is one of them)
  ARGV[6..]  the journal fields to read, the iteration's reply first

  Returns {{record, rev}, {journal values in ARGV order, as they were before the count}, {chat entries from
           ARGV[1]}, chat length, view, {steered messages}, 1 when the call was counted else 0}
]]
local rcall = redis.call

--- @include "attempt-note"

local run = rcall('HMGET', KEYS[1], 'record', 'rev')
-- The journal fields and the attempts record in one read; the note and the count in one write.
local fieldCount = #ARGV - 5
local read = rcall('HMGET', KEYS[2], ARGV[2] ~= '' and ARGV[2] or ARGV[6], unpack(ARGV, 6))
local journal = {}
local countAt = nil
for index = 1, fieldCount do
  journal[index] = read[index + 1]
  if ARGV[5 + index] == ARGV[5] then
    countAt = index
  end
end
local counted = 0
if run[1] then
  local writes = {}
  local noted = ARGV[2] ~= '' and attemptsWithNote(read[1], ARGV[3], tonumber(ARGV[4]))
  if noted then
    writes[#writes + 1] = ARGV[2]
    writes[#writes + 1] = noted
  end
  if ARGV[5] ~= '' and not journal[1] then
    local before
    if countAt then
      before = journal[countAt]
    else
      before = rcall('HGET', KEYS[2], ARGV[5])
    end
    writes[#writes + 1] = ARGV[5]
    writes[#writes + 1] = (tonumber(before) or 0) + 1
    counted = 1
  end
  if #writes > 0 then
    rcall('HSET', KEYS[2], unpack(writes))
  end
end
-- Entries from the position on say the chat's length (the position is not past the end); none may mean the
-- position is past it: then the length is read.
local from = tonumber(ARGV[1])
local entries = rcall('LRANGE', KEYS[3], from, -1)
local length
if #entries > 0 then
  length = from + #entries
else
  length = rcall('LLEN', KEYS[3])
end
return {
  run,
  journal,
  entries,
  length,
  rcall('GET', KEYS[4]),
  rcall('LRANGE', KEYS[5], 0, -1),
  counted,
}
