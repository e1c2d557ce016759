--[[
  noteForWebhooks(eventsKey, eventId, event)
    Webhooks hear of an event through the shard's outbox stream, <shard prefix>:webhooks:outbox, written here
    in the same atomic commit as the event (decision 0034). Only while the outbox exists (a worker whose
    config has webhooks creates it with its consumer group), and only for the kinds a webhook may subscribe
    to (webhookOutboxKinds in src/redis/webhook-outbox.ts lists the same ones; a unit test keeps them equal).
    The entry holds a reference: the session's events key and the event's stream id. The outbox lives in the
    events key's hash slot (the same shard prefix), so the commit stays in one slot.
]]
local webhookOutboxKinds = {run_completed = true, run_failed = true, run_cancelled = true, ask_user = true}
local function noteForWebhooks(eventsKey, eventId, event)
  -- Our events start {"v":1,"kind":"...": the kind is read without decoding a possibly large event.
  local kind = string.match(string.sub(event, 1, 64), '"kind":"([%w_]+)"')
  if not kind or not webhookOutboxKinds[kind] then
    return
  end
  local shard = string.match(eventsKey, '^(.*):session:[^:]+:events$')
  if not shard then
    return
  end
  local outbox = shard .. ':webhooks:outbox'
  if redis.call('EXISTS', outbox) == 0 then
    return
  end
  redis.call('XADD', outbox, 'MAXLEN', '~', 100000, '*', 'events', eventsKey, 'id', eventId, 'kind', kind)
end
