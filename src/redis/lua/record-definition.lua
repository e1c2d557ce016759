--[[
  Records an agent definition under its content hash (decision 0030), once: a definition is immutable and
  named by its content, so a second write of the same hash changes nothing, whoever sends it. It is kept as
  long as the deployment: an unfinished run may name it at any time (a retry, a fork, an upgrade).

  KEYS[1] definition key (<prefix>:def:<hash>)

  ARGV[1] the definition's canonical JSON

  Returns {'OK'} when it was written now, {'EXISTS'} when it was already there
]]
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return {'OK'} end
return {'EXISTS'}
