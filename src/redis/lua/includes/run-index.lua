--[[
  The run index of a shard: what GET /v1/runs and /v1/runs/summary read (src/redis/run-index.ts), kept by the
  scripts that change what it indexes, in the same atomic commit. Its keys derive from one base key
  (keys.ts runIndexKeys names the same keys for the readers), all under the shard's hash tag:
    <base>:entries         hash: run id -> "status|created ms (13 digits)|agent|root run id ('' for a root)|pending"
    <base>:status:<status> sorted set, every score 0, ordered by member "<created ms, 13 digits>:<run id>"
    <base>:agent:<agent>   the same, for the runs of one agent
    <base>:roots           the same, for root runs (started by a client, not by another run)
    <base>:tenant:<tenant> the same, for the runs of one tenant (a child run: its root's), so a scoped list
                           reads only its tenant's runs (decision 0048)
    <base>:tenants         hash: run id -> its tenant (kept beside the entries, whose format older workers
                           parse during a rolling upgrade). The runs entered before these were kept are added
                           by a one-time backfill per shard (index-run-tenants.lua), marked by
    <base>:tenants-indexed "1" once the shard's backfill has passed every entry (for a day: then it passes again,
                           for the runs an older process entered during a rolling upgrade)
    <base>:questions:<kind> sorted set: id of each pending question of that kind -> when it was asked (ms),
                           so the age of the oldest is read without reading any question (GET /metrics)
    <base>:inputs          hash: run id -> the first line of its input (the record's input_line), searched by
                           GET /v1/runs?text=; written when the run enters the index
  The listed status is the record's, except that a queued or running run with pending questions (its own, or
  for a root run those of any run of its tree: "pending" counts them) is listed as waiting_input, as
  GET /v1/runs/:id shows it.

  indexRun(base, runId, recordJson)
    Contract: call it in every script that writes a run's record, after the write, with the record just
    written (create-run, commit-step, cancel-run, and any script added later that changes a run's status,
    such as a retry moving a failed run back to running). It reads the run's entry, so the caller need not
    know the old status; a record with the same status changes nothing (one HGET). A run with no entry yet
    (created before the index existed) is entered from its record.
  indexQuestion(base, question, delta)
    Call with +1 when a question (its decoded record) becomes pending, -1 when it stops being pending
    (answered, closed, cancelled), in the same script. Counted on its run and on its root run, and entered in
    (or removed from) the pending questions of its kind.
  unindexRun(base, runId)
    Call when a run's keys are removed (retention, session deletion): it leaves no trace in the index.
]]

local function runIndexParse(entry)
  local status, created, agent, root, pending = string.match(entry, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  return {status = status, created = created, agent = agent, root = root, pending = tonumber(pending)}
end

-- Enters the run in its tenant's set (a new run, or one the backfill finds without a tenant).
local function runIndexTenant(base, runId, created, tenant)
  redis.call('HSET', base .. ':tenants', runId, tenant)
  redis.call('ZADD', base .. ':tenant:' .. tenant, 0, created .. ':' .. runId)
end

local function runIndexListed(entry)
  if entry.pending > 0 and (entry.status == 'running' or entry.status == 'queued') then
    return 'waiting_input'
  end
  return entry.status
end

local function runIndexWrite(base, runId, before, after)
  local member = after.created .. ':' .. runId
  local listedBefore = before and runIndexListed(before)
  local listedAfter = runIndexListed(after)
  if listedBefore ~= listedAfter then
    if listedBefore then
      redis.call('ZREM', base .. ':status:' .. listedBefore, member)
    end
    redis.call('ZADD', base .. ':status:' .. listedAfter, 0, member)
  end
  if not before then
    redis.call('ZADD', base .. ':agent:' .. after.agent, 0, member)
    if after.root == '' then
      redis.call('ZADD', base .. ':roots', 0, member)
    end
  end
  redis.call('HSET', base .. ':entries', runId,
    after.status .. '|' .. after.created .. '|' .. after.agent .. '|' .. after.root .. '|' .. after.pending)
end

-- An ISO 8601 UTC time (as the records hold it: 2026-11-25T16:54:49.123Z) in ms since the epoch.
local function runIndexIsoMs(iso)
  local y, mo, d, h, mi, s, frac = string.match(iso, '^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.?(%d*)Z$')
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  if mo <= 2 then
    y = y - 1
  end
  local era = math.floor(y / 400)
  local yearOfEra = y - era * 400
  local dayOfYear = math.floor((153 * ((mo + 9) % 12) + 2) / 5) + d - 1
  local dayOfEra = yearOfEra * 365 + math.floor(yearOfEra / 4) - math.floor(yearOfEra / 100) + dayOfYear
  local days = era * 146097 + dayOfEra - 719468
  local ms = tonumber(string.sub(frac .. '000', 1, 3))
  return ((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60000 + tonumber(s) * 1000 + ms
end

-- The record's status without decoding it whole (a finished record may hold a large result): its first
-- fields are strings, and a quote inside a JSON string is escaped, so this pattern matches only the real ones.
local function runIndexStatusOf(recordJson)
  local status = string.match(recordJson,
    '^{"v":1,"id":"[^"]*","session_id":"[^"]*","agent":"[^"]*","chat_id":"[^"]*","status":"(%a+)"')
  return status or cjson.decode(recordJson)['status']
end

local function indexRun(base, runId, recordJson)
  local known = redis.call('HGET', base .. ':entries', runId)
  if known then
    local before = runIndexParse(known)
    local status = runIndexStatusOf(recordJson)
    if status == before.status then
      return
    end
    local after = runIndexParse(known)
    after.status = status
    runIndexWrite(base, runId, before, after)
    return
  end
  local record = cjson.decode(recordJson)
  local root = record['root_run_id']
  if type(root) ~= 'string' then
    root = ''
  end
  -- A record from before tenants belongs to `default` (run-record.ts).
  local tenant = record['tenant']
  if type(tenant) ~= 'string' or tenant == '' then
    tenant = 'default'
  end
  local line = record['input_line']
  if type(line) == 'string' and line ~= '' then
    redis.call('HSET', base .. ':inputs', runId, line)
  end
  local created = string.format('%013d', runIndexIsoMs(record['created_at']))
  runIndexWrite(base, runId, nil, {
    status = record['status'],
    created = created,
    agent = record['agent'],
    root = root,
    pending = 0,
  })
  runIndexTenant(base, runId, created, tenant)
end

local function runIndexCountQuestion(base, runId, delta)
  local known = redis.call('HGET', base .. ':entries', runId)
  if not known then
    return nil
  end
  local before = runIndexParse(known)
  local after = runIndexParse(known)
  after.pending = math.max(0, before.pending + delta)
  runIndexWrite(base, runId, before, after)
  return before.root
end

local function indexQuestion(base, question, delta)
  local root = runIndexCountQuestion(base, question['run_id'], delta)
  if root and root ~= '' then
    runIndexCountQuestion(base, root, delta)
  end
  local asked = base .. ':questions:' .. question['kind']
  if delta > 0 then
    redis.call('ZADD', asked, runIndexIsoMs(question['created_at']), question['id'])
  else
    redis.call('ZREM', asked, question['id'])
  end
end

local function unindexRun(base, runId)
  redis.call('HDEL', base .. ':inputs', runId)
  local known = redis.call('HGET', base .. ':entries', runId)
  if not known then
    return
  end
  local entry = runIndexParse(known)
  local member = entry.created .. ':' .. runId
  redis.call('ZREM', base .. ':status:' .. runIndexListed(entry), member)
  redis.call('ZREM', base .. ':agent:' .. entry.agent, member)
  redis.call('ZREM', base .. ':roots', member)
  local tenant = redis.call('HGET', base .. ':tenants', runId)
  if tenant then
    redis.call('ZREM', base .. ':tenant:' .. tenant, member)
    redis.call('HDEL', base .. ':tenants', runId)
  end
  redis.call('HDEL', base .. ':entries', runId)
end
