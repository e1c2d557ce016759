import { sessionIdOfRun } from '../workflows/ids.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, runIndexKeys, runKeys } from './keys.js';
import { parseRun } from './run-store.js';

/** The unfinished statuses of the run index (a queued or running run with questions is `waiting_input`). */
const unfinished = ['queued', 'running', 'waiting', 'waiting_input'] as const;

/** One definition unfinished runs of an agent work under, and how many do. */
export interface DefinitionUse {
  /** The definition's hash; null for runs recorded before definitions were (they use their worker's config). */
  hash: string | null;
  runs: number;
}

/**
 * The definitions the unfinished runs of an agent (by the name they were started with) work under, with
 * counts, most used first (decision 0030): when no run uses an old one, the workers of its generation can
 * be drained. Reads the run index's unfinished runs of each shard, then their records, at most `limit`
 * runs in all (`truncated` says the counts stop there).
 */
export async function definitionsInUse(
  redis: RedisClient,
  space: KeySpace,
  agent: string,
  limit: number,
): Promise<{ definitions: DefinitionUse[]; truncated: boolean }> {
  const runIds: string[] = [];
  let truncated = false;
  for (let shard = 0; shard < space.shards && !truncated; shard += 1) {
    const index = runIndexKeys(space, shard);
    for (const status of unfinished) {
      const members = await redis.zrange(index.status(status), 0, limit);
      const ids = members.map((member) => member.slice(member.indexOf(':') + 1));
      if (ids.length === 0) continue;
      const entries = await redis.hmget(index.entries, ...ids);
      ids.forEach((id, position) => {
        // entry: status|created ms|agent|root run id|pending
        if (entries[position]?.split('|')[2] === agent) runIds.push(id);
      });
      if (runIds.length >= limit) {
        truncated = true;
        runIds.length = limit;
        break;
      }
    }
  }
  const pipeline = redis.pipeline();
  const read: string[] = [];
  for (const runId of runIds) {
    const sessionId = sessionIdOfRun(runId);
    if (!sessionId) continue;
    pipeline.hmget(runKeys(space, sessionId, runId).run, 'record', 'rev');
    read.push(runId);
  }
  const replies = read.length > 0 ? ((await pipeline.exec()) ?? []) : [];
  const counts = new Map<string | null, number>();
  replies.forEach(([error, value], position) => {
    const [record, rev] = (value ?? []) as (string | null)[];
    if (error || !record) return;
    const run = parseRun(record, rev ?? null, `run ${read[position]}`).record;
    const hash = run.definition?.hash ?? null;
    counts.set(hash, (counts.get(hash) ?? 0) + 1);
  });
  const definitions = [...counts]
    .map(([hash, runs]) => ({ hash, runs }))
    .sort((a, b) => b.runs - a.runs || String(a.hash).localeCompare(String(b.hash)));
  return { definitions, truncated };
}
