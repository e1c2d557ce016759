--[[
  Begins tool call k of iteration n (the ledger's first half), fenced like commit-step: reads what the job
  needs and, when the call has neither intent nor outcome, records the intent and its tool_call_start event,
  built from the call in the recorded reply.

  KEYS[1] job lock key
  KEYS[2] run hash
  KEYS[3] journal hash
  KEYS[4] chat list
  KEYS[5] events stream

  ARGV[1]  lock token
  ARGV[2]  journal field of the intent    (tool:<n>:<k>:intent)
  ARGV[3]  journal field of the outcome   (tool:<n>:<k>:outcome)
  ARGV[4]  chat position of the reply that made the call
  ARGV[5]  index k of the call among the reply's tool calls (0-based)
  ARGV[6]  intent JSON to record
  ARGV[7]  events stream max length
  ARGV[8]  run id     } fields of the event envelope
  ARGV[9]  agent      }
  ARGV[10] time       }
  ARGV[11] iteration n
  ARGV[12] the step's attempts field (attempts:<job id>)
  ARGV[13] this execution's attempt note (JSON; '' = none): noted while the job's lock is held and the run
           exists, whatever the ledger says (decision 0019)
  ARGV[14] how many notes the record keeps

  Returns
    {'LOCK_LOST'} | {'NO_RUN'} | {'RUN_FINISHED', status} | {'NO_REPLY'}
    {'DONE', outcomeJson}                 the call finished before
    {'INTERRUPTED', intentJson, call}     an intent without outcome: an earlier attempt was cut short
    {'STARTED', call, eventId}            the intent is recorded now
  where call is the JSON of the tool_call part, from the recorded reply.
]]
local rcall = redis.call

--- @include "step-guards"
--- @include "attempt-note"

local refused = lockHeld(KEYS[1], ARGV[1])
if refused then
  return refused
end
-- One read of the run: the execution is noted when the run exists (finished too), and the call needs it open.
local record = rcall('HGET', KEYS[2], 'record')
-- The attempts record, the outcome and the intent in one read; the note is written with the intent.
local attemptsField = ARGV[12] ~= '' and ARGV[12] or ARGV[3]
local ledger = rcall('HMGET', KEYS[3], attemptsField, ARGV[3], ARGV[2])
local noted = record and ARGV[12] ~= '' and attemptsWithNote(ledger[1], ARGV[13], tonumber(ARGV[14]))
-- Every answer but STARTED writes the note alone.
local function answer(reply)
  if noted then
    rcall('HSET', KEYS[3], ARGV[12], noted)
  end
  return reply
end
refused = recordOpen(record)
if refused then
  return answer(refused)
end
local outcome = ledger[2]
if outcome then
  return answer({'DONE', outcome})
end
local reply = rcall('LINDEX', KEYS[4], tonumber(ARGV[4]))
if not reply then
  return answer({'NO_REPLY'})
end

local wanted = tonumber(ARGV[5])
local seen = 0
local call = nil
for _, part in ipairs(cjson.decode(reply)['message']['parts']) do
  if part['type'] == 'tool_call' then
    if seen == wanted then
      call = part
      break
    end
    seen = seen + 1
  end
end
if not call then
  return answer({'NO_REPLY'})
end
local callJson = cjson.encode(call)

local intent = ledger[3]
if intent then
  return answer({'INTERRUPTED', intent, callJson})
end

if noted then
  rcall('HSET', KEYS[3], ARGV[2], ARGV[6], ARGV[12], noted)
else
  rcall('HSET', KEYS[3], ARGV[2], ARGV[6])
end
local event = cjson.encode({
  v = 1,
  kind = 'tool_call_start',
  run_id = ARGV[8],
  agent = ARGV[9],
  time = ARGV[10],
  data = {iteration = tonumber(ARGV[11]), tool_call_id = call['id'], name = call['name'], arguments = call['arguments']},
})
local eventId = rcall('XADD', KEYS[5], 'MAXLEN', '~', ARGV[7], '*', 'event', event)
return {'STARTED', callJson, eventId}
