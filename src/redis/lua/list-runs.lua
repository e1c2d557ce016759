--[[
  One page of one shard's run index, newest first (GET /v1/runs; src/redis/run-index.ts merges the shards).
  Each source is read from the cursor down, its entries checked against the filters, until it has `limit`
  matches, runs out, or `examine` entries were looked at (then the answer says how far it got, so a page
  with a rare filter costs a bounded amount and the caller goes on from there).

  KEYS[1] the index's entries hash (run id -> entry; includes/run-index.lua)
  KEYS[2] the first source: a sorted set of "<created ms, 13 digits>:<run id>" (a status, agent, tenant or
          roots set); or, with ARGV[9] = 'set', a set of run ids (a session's runs)
  KEYS[3] a further sorted-set source (several statuses), or KEYS[1] for none; likewise:
  KEYS[4] a further source or KEYS[1]
  KEYS[5] a further source or KEYS[1]
  KEYS[6] a further source or KEYS[1]
  KEYS[7] a further source or KEYS[1]
  KEYS[8] a further source or KEYS[1]
  KEYS[9] a further source or KEYS[1] (one per listed status: every status is a source when none is asked)
  KEYS[10] the index's inputs hash (run id -> the first line of its input)
  KEYS[11] the index's tenants hash (run id -> its tenant)
  (A fixed number of keys: a Redis Cluster client routes a script by its keys, which it finds only so.)

  ARGV[1] upper bound, exclusive or inclusive, as ZRANGE BYLEX takes it ('+', '(<member>')
  ARGV[2] lower bound ('-', '[<member>')
  ARGV[3] limit: most matches returned
  ARGV[4] examine: most entries looked at per source
  ARGV[5] agent ('' = any)
  ARGV[6] '1' = root runs only, '0' = child runs only, '' = both
  ARGV[7] statuses listed, comma-separated ('' = any)
  ARGV[8] run id prefixes every match starts with, comma-separated ('' = none)
  ARGV[9] 'set' when KEYS[2] is a set of run ids, else 'sorted'
  ARGV[10] text every match's input line holds, compared in lower case ('' = any); a run without an input
           line never matches it
  ARGV[11] tenant every match belongs to ('' = any): with it, the caller reads the tenant's own set (or a
           session's), never the whole index

  Returns {frontier, member, entry, member, entry, ...}, newest first: frontier is '' when every source was
  read to its end or to `limit` matches, else the oldest member looked at of a source that stopped early
  (nothing older than it was looked at there: the matches returned are all at or above it).
]]
local rcall = redis.call

--- @include "run-index"

local upper, lower = ARGV[1], ARGV[2]
local limit, examine = tonumber(ARGV[3]), tonumber(ARGV[4])
local agent, rootMode = ARGV[5], ARGV[6]
local statuses, prefixes = {}, {}
for status in string.gmatch(ARGV[7], '[^,]+') do
  statuses[status] = true
end
for prefix in string.gmatch(ARGV[8], '[^,]+') do
  prefixes[#prefixes + 1] = prefix
end
local anyStatus = ARGV[7] == ''
local text = string.lower(ARGV[10])
local tenant = ARGV[11]

-- The input lines of `ids` (one HMGET per batch), or nothing when no text is asked for.
local function linesOf(ids, first, last)
  if text == '' then
    return {}
  end
  return rcall('HMGET', KEYS[10], unpack(ids, first, last))
end

local function accepted(runId, known, line)
  if not known then
    return false
  end
  for _, prefix in ipairs(prefixes) do
    if string.sub(runId, 1, #prefix) ~= prefix then
      return false
    end
  end
  if text ~= '' and (not line or not string.find(string.lower(line), text, 1, true)) then
    return false
  end
  local entry = runIndexParse(known)
  if agent ~= '' and entry.agent ~= agent then
    return false
  end
  if (rootMode == '1' and entry.root ~= '') or (rootMode == '0' and entry.root == '') then
    return false
  end
  if tenant ~= '' and rcall('HGET', KEYS[11], runId) ~= tenant then
    return false
  end
  return anyStatus or statuses[runIndexListed(entry)] == true
end

-- Within the bounds, as ZRANGE BYLEX reads them.
local function within(member)
  if upper ~= '+' then
    local bound = string.sub(upper, 2)
    if string.sub(upper, 1, 1) == '(' and member >= bound then
      return false
    end
    if string.sub(upper, 1, 1) == '[' and member > bound then
      return false
    end
  end
  if lower ~= '-' then
    local bound = string.sub(lower, 2)
    if string.sub(lower, 1, 1) == '(' and member <= bound then
      return false
    end
    if string.sub(lower, 1, 1) == '[' and member < bound then
      return false
    end
  end
  return true
end

local found = {}
local frontier = ''

local function scanSorted(key)
  local from = upper
  local examined, matches = 0, 0
  while true do
    local want = math.min(200, examine - examined)
    local members = rcall('ZRANGE', key, from, lower, 'BYLEX', 'REV', 'LIMIT', 0, want)
    if #members == 0 then
      return
    end
    local ids = {}
    for index, member in ipairs(members) do
      ids[index] = string.sub(member, 15)
    end
    local entries = rcall('HMGET', KEYS[1], unpack(ids))
    local lines = linesOf(ids, 1, #ids)
    for index, member in ipairs(members) do
      if accepted(ids[index], entries[index], lines[index]) then
        found[#found + 1] = {member, entries[index]}
        matches = matches + 1
        if matches == limit then
          return
        end
      end
    end
    examined = examined + #members
    if #members < want then
      return
    end
    if examined >= examine then
      if members[#members] > frontier then
        frontier = members[#members]
      end
      return
    end
    from = '(' .. members[#members]
  end
end

local function scanSet(key)
  local ids = rcall('SMEMBERS', key)
  for first = 1, #ids, 500 do
    local last = math.min(first + 499, #ids)
    local entries = rcall('HMGET', KEYS[1], unpack(ids, first, last))
    local lines = linesOf(ids, first, last)
    for index = first, last do
      local known = entries[index - first + 1]
      if accepted(ids[index], known, lines[index - first + 1]) then
        local member = runIndexParse(known).created .. ':' .. ids[index]
        if within(member) then
          found[#found + 1] = {member, known}
        end
      end
    end
  end
end

if ARGV[9] == 'set' then
  scanSet(KEYS[2])
else
  for _, source in ipairs({KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]}) do
    if source ~= KEYS[1] then
      scanSorted(source)
    end
  end
end

table.sort(found, function(a, b)
  return a[1] > b[1]
end)
local result = {}
local kept = 0
for _, match in ipairs(found) do
  if kept == limit or match[1] < frontier then
    break
  end
  result[#result + 1] = match[1]
  result[#result + 1] = match[2]
  kept = kept + 1
end
if kept == limit then
  frontier = ''
end
return {frontier, unpack(result)}
