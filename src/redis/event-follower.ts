import type { RatchetEvent } from '../events/event.js';
import { parseEntries } from '../workflows/event-entries.js';
import { largestStreamId } from '../workflows/stream-ids.js';
import type { RedisClient } from './connection.js';
import type { EventHub, FollowerLease } from './event-hub.js';
import { type KeySpace, sessionKeys } from './keys.js';

const pageSize = 200;

/**
 * Every event of a session after `after` (exclusive), then each new one as it is added, until the signal
 * aborts. The follower's place is taken now, not when the generator starts: it throws
 * `too_many_followers` at once when the hub is full, so a caller can refuse before it answers. The place
 * is given back when the generator ends or the signal aborts (a generator never started is freed by
 * its signal only). Reads are non-blocking, on the command connection, one page at a time and only when
 * the consumer asks for more; waiting for new events is the hub's (one blocking connection for many
 * followers).
 */
export function followEvents(
  hub: EventHub,
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  options: { after?: string; signal: AbortSignal },
): AsyncGenerator<RatchetEvent> {
  const lease = hub.join(options.signal);
  return readFollowed(lease, redis, sessionKeys(space, sessionId).events, sessionId, options);
}

async function* readFollowed(
  lease: FollowerLease,
  redis: RedisClient,
  key: string,
  sessionId: string,
  options: { after?: string; signal: AbortSignal },
): AsyncGenerator<RatchetEvent> {
  let last = options.after;
  try {
    while (!options.signal.aborted) {
      let entries: [string, string[]][] = [];
      try {
        if (last !== largestStreamId)
          entries = await redis.xrange(key, last === undefined ? '-' : `(${last}`, '+', 'COUNT', pageSize);
      } catch (error) {
        if (options.signal.aborted) return;
        throw error;
      }
      for (const event of parseEntries(entries, sessionId)) {
        last = event.id;
        yield event;
        if (options.signal.aborted) return;
      }
      if (entries.length === pageSize) continue;
      if ((await lease.waitForNews(key, last ?? '0-0')) === 'stopped') return;
    }
  } finally {
    lease.release();
  }
}
