--[[
  Admits one model request to a provider under limits shared by every worker, or says how long to wait.
  A sliding window (a minute by default): each admitted request is a reservation (its time in a sorted set, its tokens in
  a hash) that the reply later reconciles with the usage the API reported. A cool-down (after a 429, or when
  the provider's headers say a budget is spent) holds every request back until it ends.

  KEYS[1] reservations by time (sorted set: member reservation id, score admission time in ms)
  KEYS[2] reservation tokens (hash: reservation id -> "input:output")
  KEYS[3] provider state (hash: cooldown_until)

  ARGV[1] now (ms)
  ARGV[2] requests per minute (0 = no limit)
  ARGV[3] input tokens per minute (0 = no limit)
  ARGV[4] output tokens per minute (0 = no limit)
  ARGV[5] reservation id
  ARGV[6] estimated input tokens
  ARGV[7] expected output tokens
  ARGV[8] window length (ms)
  ARGV[9] input plus output tokens per window (0 = no limit; a tenant's tokens_per_minute, decision 0038)

  Returns {'OK'} | {'WAIT', milliseconds}
]]
local rcall = redis.call
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[8])

local cooldown = tonumber(rcall('HGET', KEYS[3], 'cooldown_until') or '0')
if cooldown > now then
  return {'WAIT', tostring(cooldown - now)}
end

-- Forget what left the window.
local expired = rcall('ZRANGEBYSCORE', KEYS[1], '-inf', now - window)
if #expired > 0 then
  rcall('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  rcall('HDEL', KEYS[2], unpack(expired))
end

if rcall('ZSCORE', KEYS[1], ARGV[5]) then
  return {'OK'}
end

local rpm, inputTpm, outputTpm = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local wantInput, wantOutput = tonumber(ARGV[6]), tonumber(ARGV[7])
local entries = rcall('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local count = #entries / 2

-- The wait until enough of the window has passed for `needed` more of a budget to fit.
local function waitFor(usedAt, needed)
  local freed = 0
  for index = 1, #usedAt do
    freed = freed + usedAt[index][2]
    if freed >= needed then
      return usedAt[index][1] + window - now + 1
    end
  end
  return window
end

if rpm > 0 and count >= rpm then
  return {'WAIT', tostring(tonumber(entries[2 * (count - rpm) + 2]) + window - now + 1)}
end

local totalTpm = tonumber(ARGV[9] or '0')
if inputTpm > 0 or outputTpm > 0 or totalTpm > 0 then
  local inputUsed, outputUsed = 0, 0
  local inputAt, outputAt, totalAt = {}, {}, {}
  for index = 1, #entries, 2 do
    local tokens = rcall('HGET', KEYS[2], entries[index]) or '0:0'
    local input, output = string.match(tokens, '(%d+):(%d+)')
    input, output = tonumber(input), tonumber(output)
    local at = tonumber(entries[index + 1])
    inputUsed = inputUsed + input
    outputUsed = outputUsed + output
    inputAt[#inputAt + 1] = {at, input}
    outputAt[#outputAt + 1] = {at, output}
    totalAt[#totalAt + 1] = {at, input + output}
  end
  -- A request larger than the whole budget is admitted alone, into an empty window.
  if inputTpm > 0 and inputUsed + wantInput > inputTpm and count > 0 then
    return {'WAIT', tostring(waitFor(inputAt, inputUsed + wantInput - inputTpm))}
  end
  -- A request's output is not known before its reply (it reserves none): it goes while the window's replies
  -- have used less than the budget, so a spent budget (used up exactly) holds it back too.
  local wantOutputAtLeastOne = math.max(wantOutput, 1)
  if outputTpm > 0 and outputUsed + wantOutputAtLeastOne > outputTpm and count > 0 then
    return {'WAIT', tostring(waitFor(outputAt, outputUsed + wantOutputAtLeastOne - outputTpm))}
  end
  local totalUsed, wantTotal = inputUsed + outputUsed, wantInput + wantOutput
  if totalTpm > 0 and totalUsed + wantTotal > totalTpm and count > 0 then
    return {'WAIT', tostring(waitFor(totalAt, totalUsed + wantTotal - totalTpm))}
  end
end

rcall('ZADD', KEYS[1], now, ARGV[5])
rcall('HSET', KEYS[2], ARGV[5], wantInput .. ':' .. wantOutput)
rcall('PEXPIRE', KEYS[1], window * 2)
rcall('PEXPIRE', KEYS[2], window * 2)
return {'OK'}
