--[[
  The one-time backfill of a shard's per-tenant run index (decision 0048): runs entered in the index before
  it kept their tenants (<base>:tenants) get theirs, from their records (read by the caller), and join their
  tenant's set. Safe to repeat and to race: a run that has its tenant already, or is gone, is left as it is. The caller passes
  every entry of the shard (HSCAN) in batches, then sets the marker with `done`.

  KEYS[1] the shard's run index (base key; includes/run-index.lua)

  ARGV[1] '1' when this is the last batch: the shard's marker (<base>:tenants-indexed) is set for a day, after
          which the next list by tenant passes again (a run an older process created during a rolling upgrade,
          after a pass, has no tenant in the index: it is found by the next pass)
  ARGV[2 ..] pairs: run id, its tenant

  Returns the number of entries given their tenant
]]
--- @include "run-index"

local base = KEYS[1]
local given = 0
for index = 2, #ARGV - 1, 2 do
  local runId, tenant = ARGV[index], ARGV[index + 1]
  local known = redis.call('HGET', base .. ':entries', runId)
  if known and redis.call('HEXISTS', base .. ':tenants', runId) == 0 then
    runIndexTenant(base, runId, runIndexParse(known).created, tenant)
    given = given + 1
  end
end
if ARGV[1] == '1' then
  redis.call('SET', base .. ':tenants-indexed', '1', 'EX', 86400)
end
return given
