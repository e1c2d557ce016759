import type { Engine } from '../../src/engine/index.js';
import type { RedisClient } from '../../src/redis/connection.js';
import { runKeys } from '../../src/redis/keys.js';

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

/**
 * Whether the model call of a run's iteration has been counted in its journal (`calls:<n>`): a test that
 * kills a worker mid-model-call waits for this, not only for the scripted model's log line. The count is
 * sent beside the request, so a worker killed at once may die before it leaves; the takeover then cannot
 * know the call was made, and does not report it as repeated.
 */
export async function modelCallCounted(
  world: { redis: RedisClient; engine: Engine },
  sessionId: string,
  runId: string,
  iteration: number,
): Promise<boolean> {
  const count = await world.redis.hget(
    runKeys(world.engine.space, sessionId, runId).journal,
    `calls:${iteration}`,
  );
  return Number(count ?? 0) >= 1;
}
