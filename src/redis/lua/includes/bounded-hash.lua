--[[
  boundedHashSet(hashKey, field, value, most)
    -> nil when the field is set; else {'FULL', count}: the field is new and the hash already holds `most`
       fields. Rewriting a field the hash holds always succeeds.
]]
local function boundedHashSet(hashKey, field, value, most)
  if redis.call('HEXISTS', hashKey, field) == 0 then
    local count = redis.call('HLEN', hashKey)
    if count >= most then
      return {'FULL', tostring(count)}
    end
  end
  redis.call('HSET', hashKey, field, value)
  return nil
end
