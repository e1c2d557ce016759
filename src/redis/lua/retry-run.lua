--[[
  Retries a failed or cancelled run (decision 0022): a new run on the same session and chat continues it.
  Writes the new run's record, copies the journal fields it needs from the retried run, appends the results a
  cut-short batch of tool calls lacked, names the retry on the retried run's record, and takes the session's
  active run. The retried run stays finished: its stragglers' commits keep being refused.

  KEYS[1]  session hash: record, active_run
  KEYS[2]  chat list
  KEYS[3]  events stream
  KEYS[4]  the retried run's hash: record, rev
  KEYS[5]  the retried run's journal
  KEYS[6]  the new run's hash
  KEYS[7]  the new run's journal
  KEYS[8]  set of the session's run ids
  KEYS[9]  the shard's sessions (retention: session hash key -> last activity, ms)
  KEYS[10] the shard's run index (base key; includes/run-index.lua)
  KEYS[11] the new run's tree usage hash (RunKeys.treeUsage): starts with the usage its record carries over,
           so its tree's sums (its run budget, GET /v1/runs' tree_usage) count the work it continues
  KEYS[12] the session's queued messages (list): a retry waits behind them (decision 0040)

  ARGV[1]  'create', or 'check': answer as 'create' would, and write nothing (the caller WATCHes the keys,
           checks, then creates and adds the first step in one MULTI only when the check said OK)
  ARGV[2]  the retried run's id
  ARGV[3]  the retried run's revision as read
  ARGV[4]  the retried run's new record JSON (retried_by set)
  ARGV[5]  the new run's id
  ARGV[6]  the new run's record JSON
  ARGV[7]  expected chat length before the append
  ARGV[8]  events stream max length (approximate trimming)
  ARGV[9]  number of journal fields to copy J
  ARGV[10 .. 9+J]  the fields
  ARGV[10+J]       number of chat entries M, then M entries (JSON), then the events (JSON)

  Returns
    {'OK', eventId, ...}    ({'OK'} for a check)
    {'NO_RUN'}              the retried run is gone
    {'CONFLICT', what}      the retried run or the chat changed since they were read: read again and retry
    {'RUN_EXISTS'}
    {'SESSION_BUSY', activeRunId}
    {'QUEUE_WAITING', count}   the session has no active run but messages queued, whose runs start first
]]
local rcall = redis.call

--- @include "append-entries"
--- @include "new-run"

local rev = rcall('HGET', KEYS[4], 'rev')
if not rev then
  return {'NO_RUN'}
end
if rev ~= ARGV[3] then
  return {'CONFLICT', 'run'}
end
local answer = newRunAnswer(ARGV[1], KEYS[6], KEYS[1], KEYS[2], tonumber(ARGV[7]), nil, KEYS[12])
if answer then
  return answer
end

rcall('HSET', KEYS[4], 'record', ARGV[4], 'rev', tonumber(rev) + 1)
indexRun(KEYS[10], ARGV[2], ARGV[4])
startRun(KEYS[6], ARGV[6], KEYS[8], ARGV[5], KEYS[9], KEYS[1], KEYS[10])
rcall('HSET', KEYS[1], 'active_run', ARGV[5])
local carried = cjson.decode(ARGV[6])
for _, field in ipairs({'input_tokens', 'output_tokens', 'cached_input_tokens', 'requests'}) do
  local amount = carried['usage'][field]
  if amount ~= 0 then
    rcall('HINCRBYFLOAT', KEYS[11], field, amount)
  end
end
if carried['cost_usd'] ~= 0 then
  rcall('HINCRBYFLOAT', KEYS[11], 'cost_usd', carried['cost_usd'])
end

local fields = tonumber(ARGV[9])
for index = 10, 9 + fields do
  local value = rcall('HGET', KEYS[5], ARGV[index])
  if value then
    rcall('HSET', KEYS[7], ARGV[index], value)
  end
end

return appendEntries(KEYS[2], KEYS[3], ARGV[8], 10 + fields)
