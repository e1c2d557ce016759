--[[
  Reads what an iteration step needs, in one command: the run, its journal fields, and the chat from a
  position on (the worker holds the entries before it: a chat only grows). Read-only.

  KEYS[1] run hash
  KEYS[2] journal hash
  KEYS[3] chat list
  KEYS[4] the chat's context view (the summary the model gets in place of the entries it covers)

  ARGV[1]    first chat position to return
  ARGV[2..]  the journal fields to read

  Returns {{record, rev}, {journal values in ARGV order}, {chat entries from ARGV[1]}, chat length, view}
]]
local rcall = redis.call
return {
  rcall('HMGET', KEYS[1], 'record', 'rev'),
  rcall('HMGET', KEYS[2], unpack(ARGV, 2)),
  rcall('LRANGE', KEYS[3], tonumber(ARGV[1]), -1),
  rcall('LLEN', KEYS[3]),
  rcall('GET', KEYS[4]),
}
