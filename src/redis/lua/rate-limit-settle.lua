--[[
  After a model request: replaces a reservation's estimate with the tokens the API reported (if the
  reservation is still in the window), and extends the provider's cool-down when the reply (a 429, or
  rate-limit headers with a budget spent) says to hold back.

  KEYS[1] reservations by time (sorted set)
  KEYS[2] reservation tokens (hash)
  KEYS[3] provider state (hash: cooldown_until)

  ARGV[1] reservation id ('' = none to settle)
  ARGV[2] input tokens used
  ARGV[3] output tokens used
  ARGV[4] hold back until (ms since the epoch; 0 = no cool-down)
  ARGV[5] now (ms): the request is complete, so the provider received it before now. The reservation counts
          from now on, so the provider never sees more than the limit in a window, whatever the latency.

  Returns {'OK'}
]]
local rcall = redis.call
if ARGV[1] ~= '' and rcall('ZSCORE', KEYS[1], ARGV[1]) then
  rcall('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[3])
  rcall('ZADD', KEYS[1], 'XX', ARGV[5], ARGV[1])
end
local until_ = tonumber(ARGV[4])
if until_ > 0 then
  local current = tonumber(rcall('HGET', KEYS[3], 'cooldown_until') or '0')
  if until_ > current then
    rcall('HSET', KEYS[3], 'cooldown_until', until_)
    rcall('PEXPIREAT', KEYS[3], until_ + 60000)
  end
end
return {'OK'}
