import { describeIssues } from '../schemas/issues.js';
import { type QuestionRecord, questionRecordSchema } from '../workflows/question-record.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, sessionKeys, shardOf } from './keys.js';
import { listIndexedRuns, type UnreadableRecord } from './run-index.js';
import { execPipeline } from './run-store.js';

/**
 * Every pending question across sessions (GET /v1/questions, a console's inbox), found without a scan: the
 * run index lists the runs waiting for input, and only their sessions' pending questions are read, two
 * pipelined round trips per shard (the pending ids, then the questions), every shard at once.
 */

/** Runs waiting for input the inbox looks at, newest first; with more, the answer says it is truncated. */
export const inboxRunsRead = 500;

export interface InboxQuestion extends QuestionRecord {
  /** The root of the asking run's tree, as the run index lists it; null when the asking run is a root. */
  root_run_id: string | null;
}

export interface Inbox {
  /** Newest first (by when they were asked). */
  questions: InboxQuestion[];
  /** More questions were pending than the answer holds (or than the runs looked at asked). */
  truncated: boolean;
}

export async function readInbox(
  redis: RedisClient,
  space: KeySpace,
  limit: number,
  onUnreadable?: UnreadableRecord,
): Promise<Inbox> {
  const waiting = await listIndexedRuns(redis, space, {
    statuses: ['waiting_input'],
    limit: inboxRunsRead + 1,
  });
  const runs = waiting.runs.slice(0, inboxRunsRead);
  const rootOf = new Map(runs.map((run) => [run.id, run.root_run_id]));
  const sessionsByShard = new Map<number, Set<string>>();
  for (const run of runs) {
    const shard = shardOf(space, run.session_id);
    sessionsByShard.set(shard, (sessionsByShard.get(shard) ?? new Set()).add(run.session_id));
  }
  // On a cluster each shard's keys live on one master: one pipeline per shard, never one across shards.
  const perShard = await Promise.all(
    [...sessionsByShard.values()].map((sessions) =>
      pendingOfSessions(redis, space, [...sessions], onUnreadable),
    ),
  );
  const questions = perShard
    .flat()
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  return {
    questions: questions
      .slice(0, limit)
      .map((question) => ({ ...question, root_run_id: rootOf.get(question.run_id) ?? null })),
    // The index stopped before every waiting run was looked at, or more questions than asked for.
    truncated: waiting.next !== null || questions.length > limit,
  };
}

/** The pending questions of sessions of one shard. */
async function pendingOfSessions(
  redis: RedisClient,
  space: KeySpace,
  sessionIds: readonly string[],
  onUnreadable: UnreadableRecord | undefined,
): Promise<QuestionRecord[]> {
  const keys = sessionIds.map((sessionId) => sessionKeys(space, sessionId));
  const idLists = (await execPipeline(
    keys.reduce((pipeline, session) => pipeline.smembers(session.pending), redis.pipeline()),
  )) as string[][];
  const asked = keys.flatMap((session, index) => {
    const ids = idLists[index] ?? [];
    return ids.length === 0 ? [] : [{ questions: session.questions, ids }];
  });
  if (asked.length === 0) return [];
  const texts = (await execPipeline(
    asked.reduce((pipeline, { questions, ids }) => pipeline.hmget(questions, ...ids), redis.pipeline()),
  )) as (string | null)[][];
  return asked.flatMap(({ ids }, index) =>
    (texts[index] ?? []).flatMap((text, position) => {
      const question = text === null ? undefined : questionOf(text, ids[position] ?? '?', onUnreadable);
      return question?.status === 'pending' ? [question] : [];
    }),
  );
}

/** A question record, or undefined (reported) when it does not parse: one bad record must not hide the rest. */
function questionOf(
  text: string,
  questionId: string,
  onUnreadable: UnreadableRecord | undefined,
): QuestionRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    onUnreadable?.(questionId, `not valid JSON: ${(error as Error).message}`);
    return undefined;
  }
  const parsed = questionRecordSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  onUnreadable?.(questionId, describeIssues(parsed.error.issues));
  return undefined;
}
