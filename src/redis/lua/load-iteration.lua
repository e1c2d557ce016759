--[[
  Reads what an iteration step needs, in one command: the run, its journal fields, and the chat. Read-only.

  KEYS[1] run hash
  KEYS[2] journal hash
  KEYS[3] chat list

  ARGV    the journal fields to read

  Returns {{record, rev}, {journal values in ARGV order}, {chat entries}}
]]
local rcall = redis.call
return {
  rcall('HMGET', KEYS[1], 'record', 'rev'),
  rcall('HMGET', KEYS[2], unpack(ARGV)),
  rcall('LRANGE', KEYS[3], 0, -1),
}
