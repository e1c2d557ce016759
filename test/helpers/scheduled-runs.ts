import type { RedisClient } from '../../src/redis/connection.js';
import { type RunRecord, runRecordSchema } from '../../src/workflows/run-record.js';

/** A run a schedule started, as found in Redis (not through the schedule's own records). */
export interface ScheduledRun {
  runId: string;
  schedule: string;
  fireAt: string;
  record: RunRecord;
}

/**
 * Every run under the prefix whose origin names a schedule, found by scanning the run records themselves, so
 * a test's count does not trust the bookkeeping it checks. Sorted by fire time.
 */
export async function scheduledRuns(redis: RedisClient, prefix: string): Promise<ScheduledRun[]> {
  const runKeys: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:{*}:run:run_*`, 'COUNT', 1000);
    cursor = next;
    runKeys.push(...keys.filter((key) => /:run:run_[0-9a-z]+_[0-9a-z]+$/.test(key)));
  } while (cursor !== '0');
  const runs: ScheduledRun[] = [];
  for (const key of runKeys) {
    const text = await redis.hget(key, 'record');
    if (!text) continue;
    const record = runRecordSchema.parse(JSON.parse(text));
    if (record.origin?.kind !== 'schedule') continue;
    runs.push({ runId: record.id, schedule: record.origin.schedule, fireAt: record.origin.fire_at, record });
  }
  return runs.sort((a, b) => a.fireAt.localeCompare(b.fireAt));
}
