import { ReplyError } from 'ioredis';
import type { RetentionConfig } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import { sessionIdOfRun } from '../workflows/ids.js';
import { runRecordSchema } from '../workflows/run-record.js';
import { isThreadChatId } from '../workflows/thread-chats.js';
import type { RedisClient } from './connection.js';
import {
  chatKey,
  chatViewKey,
  type KeySpace,
  mainChatId,
  retentionKeys,
  runKeys,
  sessionKeys,
} from './keys.js';
import { runScript } from './scripts.js';
import { sessionContentKeys } from './session-store.js';

/**
 * Retention: what a long-lived deployment stops keeping. Every shard has two indexes, written by the same
 * atomic commits that change what they index (create-run, commit-step and cancel-run, through
 * lua/includes/retention-index.lua): when each run finished, and when each session was last active. A sweep
 * reads the entries older than the cutoff, in batches, and removes each with a script that checks again,
 * atomically, that it may go:
 * - a finished run whose root run is finished too: its record, journal, children set, tree usage and its own
 *   chat (a child run's, a team member's); the session and its main chat stay;
 * - a session with no active run and no pending question, not active since the cutoff: everything in it.
 * Nothing an unfinished run needs is removed, however old (a run waiting a month for an answer keeps all).
 * An entry the sweep cannot handle (a record that fails its schema) is skipped, logged and counted, and left
 * as it is: one bad session must not stop retention for every session after it in its shard.
 */

export interface SweepResult {
  runs: number;
  sessions: number;
  /** Entries looked at and kept (a run whose root is open, a busy session): looked at again one window later. */
  kept: number;
  /** Entries the sweep could not handle (logged as errors): left in place and looked at again next sweep. */
  skipped: number;
}

/** The Redis server's clock in ms: the indexes are written with it, so the cutoff compares. */
async function redisNowMs(redis: RedisClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * One sweep over every shard: at most `maxPerShard` runs and sessions removed per shard, in batches of
 * `settings.batch_size`, so one sweep is bounded in time; what is left waits for the next one.
 */
export async function sweepExpired(
  redis: RedisClient,
  space: KeySpace,
  settings: RetentionConfig,
  logger: Logger,
  maxPerShard = 10_000,
  /** Told the ids of the runs each batch removed (fair admission frees a slot one of them still holds). */
  onRemoved?: (runIds: readonly string[]) => Promise<unknown>,
): Promise<SweepResult> {
  const total: SweepResult = { runs: 0, sessions: 0, kept: 0, skipped: 0 };
  const now = await redisNowMs(redis);
  for (let shard = 0; shard < space.shards; shard += 1) {
    const indexes = retentionKeys(space, shard);
    // Finished runs first: a session that goes in the same sweep then has fewer keys to gather.
    const kinds = [
      { windowS: settings.finished_runs_s, index: indexes.finishedRuns, expire: expireRuns },
      { windowS: settings.idle_sessions_s, index: indexes.sessions, expire: expireSessions },
    ];
    for (const { windowS, index, expire } of kinds) {
      if (windowS <= 0) continue;
      const cutoff = now - windowS * 1000;
      await sweepIndex(index, cutoff, settings.batch_size, maxPerShard, async (members) => {
        const skippedBefore = total.skipped;
        const removed: string[] = [];
        await expire(redis, space, shard, members, cutoff, { total, skip, removed });
        if (removed.length > 0) await onRemoved?.(removed);
        return total.skipped - skippedBefore;
      });
    }
  }
  if (total.runs + total.sessions + total.skipped > 0)
    logger.info({ ...total }, 'retention: expired data removed');
  return total;

  function skip(entry: string, error: unknown): void {
    total.skipped += 1;
    logger.error({ entry, err: error }, 'retention: skipped an entry it cannot handle');
  }

  async function sweepIndex(
    index: string,
    cutoff: number,
    batch: number,
    limit: number,
    expire: (members: string[]) => Promise<number>,
  ): Promise<void> {
    let seen = 0;
    // Skipped members stay in the range, in front: the next batch starts after them.
    let skipped = 0;
    while (seen < limit) {
      const members = await redis.zrangebyscore(index, '-inf', cutoff, 'LIMIT', skipped, batch);
      if (members.length === 0) return;
      skipped += await expire(members);
      seen += members.length;
      // Every other member looked at left the range (removed, or marked again with a later time).
      if (members.length < batch) return;
    }
  }
}

/** What a batch of a sweep adds to: the counts, the entries skipped, and the ids of the runs removed. */
interface BatchTally {
  total: SweepResult;
  skip: Skip;
  removed: string[];
}

async function expireRuns(
  redis: RedisClient,
  space: KeySpace,
  _shard: number,
  runIds: readonly string[],
  cutoff: number,
  { total, skip, removed }: BatchTally,
): Promise<void> {
  const located = runIds.map((runId) => ({ runId, sessionId: sessionIdOfRun(runId) }));
  const pipeline = redis.pipeline();
  for (const { runId, sessionId } of located) {
    if (sessionId) pipeline.hget(runKeys(space, sessionId, runId).run, 'record');
  }
  const records = ((await pipeline.exec()) ?? []).map(([, value]) => value as string | null);
  let next = 0;
  for (const { runId, sessionId } of located) {
    if (!sessionId) {
      // Not a run id: nothing of ours; drop it from every shard's index it could be in.
      for (let shard = 0; shard < space.shards; shard += 1)
        await redis.zrem(retentionKeys(space, shard).finishedRuns, runId);
      continue;
    }
    const json = records[next++] ?? null;
    try {
      if (await expireRun(redis, space, sessionId, runId, json, cutoff, total)) removed.push(runId);
    } catch (error) {
      if (!isEntryFault(error)) throw error;
      skip(runId, error);
    }
  }
}

async function expireRun(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runId: string,
  json: string | null,
  cutoff: number,
  total: SweepResult,
): Promise<boolean> {
  const keys = runKeys(space, sessionId, runId);
  const record = json ? parseJsonRecord(runRecordSchema, json, `run ${runId}`) : undefined;
  const root = record?.root_run_id ? runKeys(space, sessionId, record.root_run_id).run : keys.run;
  // A thread chat (a delegation's `thread`) goes with its session, not with one of the runs that used it.
  const chat =
    record && record.chat_id !== mainChatId && !isThreadChatId(record.chat_id)
      ? chatKey(space, sessionId, record.chat_id)
      : undefined;
  const outcome = await runScript(
    redis,
    'expire-run',
    [
      keys.run,
      keys.journal,
      keys.children,
      keys.treeUsage,
      root,
      keys.runs,
      retentionKeys(space, keys.shard).finishedRuns,
      chat ?? keys.run,
      chat ? chatViewKey(chat) : keys.run,
      keys.runIndex,
      keys.waits,
      keys.signals,
    ],
    [runId, cutoff],
  );
  count(outcome as unknown as string, 'runs', total);
  return (outcome as unknown as string) === 'EXPIRED';
}

async function expireSessions(
  redis: RedisClient,
  space: KeySpace,
  shard: number,
  members: readonly string[],
  cutoff: number,
  { total, skip, removed }: BatchTally,
): Promise<void> {
  for (const member of members) {
    try {
      removed.push(...(await expireSession(redis, space, shard, member, cutoff, total)));
    } catch (error) {
      if (!isEntryFault(error)) throw error;
      skip(member, error);
    }
  }
}

async function expireSession(
  redis: RedisClient,
  space: KeySpace,
  shard: number,
  member: string,
  cutoff: number,
  total: SweepResult,
): Promise<string[]> {
  const sessionId = member.slice(member.lastIndexOf(':session:') + ':session:'.length);
  const session = sessionKeys(space, sessionId);
  const runIds = await redis.smembers(session.runs);
  const outcome = await runScript(
    redis,
    'expire-session',
    [
      session.session,
      session.pending,
      retentionKeys(space, shard).sessions,
      session.runIndex,
      session.runs,
      ...(await sessionContentKeys(redis, space, sessionId, runIds)),
    ],
    [cutoff],
  );
  count(outcome as unknown as string, 'sessions', total);
  return (outcome as unknown as string) === 'EXPIRED' ? runIds : [];
}

type Skip = (entry: string, error: unknown) => void;

/**
 * What is wrong with one entry, not with Redis: a record that fails its schema, or a script that refused
 * the entry's keys. Anything else (Redis away) ends the sweep; the next one tries again.
 */
function isEntryFault(error: unknown): boolean {
  if (error instanceof RatchetError) return error.code === 'record_invalid';
  // A script error is "ERR ..."; a server in trouble answers OOM, LOADING, READONLY, CLUSTERDOWN and so on.
  return error instanceof ReplyError && (error as Error).message.startsWith('ERR');
}

function count(outcome: string, what: 'runs' | 'sessions', total: SweepResult): void {
  if (outcome === 'EXPIRED') total[what] += 1;
  else if (outcome === 'KEPT' || outcome === 'BUSY') total.kept += 1;
}
