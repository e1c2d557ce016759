import type { RatchetEvent } from '../events/event.js';
import { parseEntries } from '../workflows/event-entries.js';
import type { RedisClient } from './connection.js';

/** The event kinds lua/includes/webhook-outbox.lua adds to the outbox (a unit test keeps both lists equal). */
export const webhookOutboxKinds = ['run_completed', 'run_failed', 'run_cancelled', 'ask_user'] as const;

/** The consumer group every worker with webhooks reads the outboxes in. */
const outboxGroup = 'webhooks';

/** One outbox entry: a reference to an event in its session's stream. */
export interface OutboxEntry {
  /** The outbox entry's own stream id (acknowledged once its deliveries are enqueued). */
  entryId: string;
  eventsKey: string;
  eventId: string;
}

/**
 * Creates the outbox with its consumer group, from which on the commit scripts add to it. Idempotent: a
 * group that exists is kept with its position.
 */
export async function openWebhookOutbox(redis: RedisClient, outboxKey: string): Promise<void> {
  try {
    await redis.xgroup('CREATE', outboxKey, outboxGroup, '0', 'MKSTREAM');
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes('BUSYGROUP')) throw error;
  }
}

/**
 * The next entries for this consumer: first those another consumer read and left unacknowledged for
 * `staleAfterMs` (it died between reading and acknowledging), then new ones, waiting up to `blockMs`.
 */
export async function readWebhookOutbox(
  redis: RedisClient,
  outboxKey: string,
  options: { consumer: string; count: number; blockMs: number; staleAfterMs: number },
): Promise<OutboxEntry[]> {
  const claimed = (await redis.xautoclaim(
    outboxKey,
    outboxGroup,
    options.consumer,
    options.staleAfterMs,
    '0-0',
    'COUNT',
    options.count,
  )) as [string, [string, string[]][] | null, string[]?];
  const stale = (claimed[1] ?? []).filter((entry) => entry !== null);
  if (stale.length > 0) return stale.map(toOutboxEntry);
  const read = (await redis.xreadgroup(
    'GROUP',
    outboxGroup,
    options.consumer,
    'COUNT',
    options.count,
    'BLOCK',
    options.blockMs,
    'STREAMS',
    outboxKey,
    '>',
  )) as [string, [string, string[]][]][] | null;
  return (read?.[0]?.[1] ?? []).map(toOutboxEntry);
}

function toOutboxEntry([entryId, fields]: [string, string[]]): OutboxEntry {
  const field = (name: string) => fields[fields.indexOf(name) + 1] ?? '';
  return { entryId, eventsKey: field('events'), eventId: field('id') };
}

/** Acknowledges entries whose deliveries are enqueued, and removes them. */
export async function ackWebhookOutbox(
  redis: RedisClient,
  outboxKey: string,
  entryIds: string[],
): Promise<void> {
  if (entryIds.length === 0) return;
  await redis
    .multi()
    .xack(outboxKey, outboxGroup, ...entryIds)
    .xdel(outboxKey, ...entryIds)
    .exec();
}

/** The event at `eventId` of a session's stream, or undefined once it is trimmed or the session expired. */
export async function readEventAt(
  redis: RedisClient,
  eventsKey: string,
  eventId: string,
  sessionId: string,
): Promise<RatchetEvent | undefined> {
  const entries = (await redis.xrange(eventsKey, eventId, eventId)) as [string, string[]][];
  return parseEntries(entries, sessionId)[0];
}
