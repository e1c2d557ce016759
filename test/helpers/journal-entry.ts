import type { RedisClient } from '../../src/redis/connection.js';
import { runKeys } from '../../src/redis/keys.js';
import type { Engine } from '../../src/workflows/index.js';

/** One field of a run's journal, parsed (the test fails when it is missing). */
export async function journalEntry(
  world: { redis: RedisClient; engine: Engine },
  sessionId: string,
  runId: string,
  field: string,
  // biome-ignore lint/suspicious/noExplicitAny: a journal entry of any kind, read by the test's expectations.
): Promise<any> {
  const text = await world.redis.hget(runKeys(world.engine.space, sessionId, runId).journal, field);
  if (text === null) throw new Error(`journal field ${field} of ${runId} is missing`);
  return JSON.parse(text);
}
