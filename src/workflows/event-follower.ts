import type { Redis } from 'ioredis';
import type { RatchetEvent } from '../events/event.js';
import { type KeySpace, sessionKeys } from '../redis/keys.js';
import { parseEntries } from './event-entries.js';

/**
 * Every event of a session after `after` (exclusive), then each new one as it is added, until the signal
 * aborts. Blocking reads use a connection of their own, closed when the follower ends, so a slow reader holds
 * nothing anybody else needs.
 */
export async function* followEvents(
  redis: Redis,
  space: KeySpace,
  sessionId: string,
  options: { after?: string; signal: AbortSignal; blockMs?: number },
): AsyncGenerator<RatchetEvent> {
  const key = sessionKeys(space, sessionId).events;
  const reader = redis.duplicate({ connectionName: 'ratchet-events-follower', maxRetriesPerRequest: null });
  reader.on('error', () => {});
  const stop = () => reader.disconnect();
  options.signal.addEventListener('abort', stop, { once: true });
  let last = options.after ?? '0-0';
  try {
    while (!options.signal.aborted) {
      let reply: [string, [string, string[]][]][] | null;
      try {
        reply = (await reader.xread('COUNT', 200, 'BLOCK', options.blockMs ?? 5_000, 'STREAMS', key, last)) as
          | [string, [string, string[]][]][]
          | null;
      } catch (error) {
        if (options.signal.aborted) return;
        throw error;
      }
      const entries = reply?.[0]?.[1] ?? [];
      for (const event of parseEntries(entries, sessionId)) {
        last = event.id;
        yield event;
      }
    }
  } finally {
    options.signal.removeEventListener('abort', stop);
    reader.disconnect();
  }
}
