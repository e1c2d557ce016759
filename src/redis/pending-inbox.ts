import { describeIssues } from '../schemas/issues.js';
import { sessionOfQuestion } from '../workflows/question-answers.js';
import {
  type QuestionKind,
  type QuestionRecord,
  questionKinds,
  questionRecordSchema,
} from '../workflows/question-record.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, runIndexKeys, sessionKeys, shardOf } from './keys.js';
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

/** Pending questions of one kind looked at per shard and round trip when the oldest is looked for. */
const oldestCandidates = 16;

/**
 * When the oldest pending question of each kind was asked (ms since the epoch; a kind with none is absent),
 * from the run index's sorted sets of pending questions (lua/includes/run-index.lua): no question record is
 * read, so a scrape costs the same whatever the questions hold. An entry whose question stopped being
 * pending without the scripts that keep the sets (its session was deleted while it waited) is removed when
 * it is met.
 */
export async function oldestPendingQuestions(
  redis: RedisClient,
  space: KeySpace,
): Promise<Partial<Record<QuestionKind, number>>> {
  const shards = Array.from({ length: space.shards }, (_, shard) => shard);
  const perShard = await Promise.all(shards.map((shard) => oldestOfShard(redis, space, shard)));
  const oldest: Partial<Record<QuestionKind, number>> = {};
  for (const ages of perShard) {
    for (const kind of questionKinds) {
      const askedAt = ages[kind];
      if (askedAt !== undefined) oldest[kind] = Math.min(oldest[kind] ?? askedAt, askedAt);
    }
  }
  return oldest;
}

async function oldestOfShard(
  redis: RedisClient,
  space: KeySpace,
  shard: number,
): Promise<Partial<Record<QuestionKind, number>>> {
  const keys = runIndexKeys(space, shard);
  const oldest: Partial<Record<QuestionKind, number>> = {};
  let open: readonly QuestionKind[] = questionKinds;
  // Each round either finds a kind's oldest or removes every entry it looked at: it ends.
  while (open.length > 0) {
    const ranges = (await execPipeline(
      open.reduce(
        (pipeline, kind) =>
          pipeline.zrange(keys.pendingQuestions(kind), 0, oldestCandidates - 1, 'WITHSCORES'),
        redis.pipeline(),
      ),
    )) as string[][];
    const candidates = open.flatMap((kind, index) => {
      const flat = ranges[index] ?? [];
      const entries: { kind: QuestionKind; id: string; askedAt: number }[] = [];
      for (let at = 0; at + 1 < flat.length; at += 2)
        entries.push({ kind, id: flat[at] ?? '', askedAt: Number(flat[at + 1]) });
      return entries;
    });
    if (candidates.length === 0) break;
    // An id that names no session is no question of ours: stale, like one no longer pending.
    const sessions = candidates.map((candidate) => sessionOfQuestion(candidate.id));
    const replies = (await execPipeline(
      candidates.reduce((pipeline, candidate, index) => {
        const sessionId = sessions[index];
        return sessionId ? pipeline.sismember(sessionKeys(space, sessionId).pending, candidate.id) : pipeline;
      }, redis.pipeline()),
    )) as number[];
    let reply = 0;
    const pending = sessions.map((sessionId) => sessionId !== undefined && replies[reply++] === 1);
    const stale: typeof candidates = [];
    const next: QuestionKind[] = [];
    for (const kind of open) {
      const ofKind = candidates.flatMap((candidate, index) =>
        candidate.kind === kind ? [{ ...candidate, pending: pending[index] === true }] : [],
      );
      const found = ofKind.find((candidate) => candidate.pending);
      stale.push(...ofKind.slice(0, found ? ofKind.indexOf(found) : ofKind.length));
      if (found) oldest[kind] = found.askedAt;
      else if (ofKind.length === oldestCandidates) next.push(kind);
    }
    if (stale.length > 0) {
      await execPipeline(
        stale.reduce(
          (pipeline, entry) => pipeline.zrem(keys.pendingQuestions(entry.kind), entry.id),
          redis.pipeline(),
        ),
      );
    }
    open = next;
  }
  return oldest;
}

/**
 * Enters pending questions in the run index's sorted sets of their kind, unless there (`ZADD NX`): for the
 * questions asked before those sets existed. One that stopped being pending meanwhile is removed by the
 * next read of the oldest.
 */
export async function indexPendingQuestions(
  redis: RedisClient,
  space: KeySpace,
  questions: readonly QuestionRecord[],
): Promise<void> {
  const byShard = new Map<number, QuestionRecord[]>();
  for (const question of questions) {
    const shard = shardOf(space, question.session_id);
    const ofShard = byShard.get(shard);
    if (ofShard) ofShard.push(question);
    else byShard.set(shard, [question]);
  }
  await Promise.all(
    [...byShard].map(([shard, ofShard]) => {
      const keys = runIndexKeys(space, shard);
      return execPipeline(
        ofShard.reduce(
          (pipeline, question) =>
            pipeline.zadd(
              keys.pendingQuestions(question.kind),
              'NX',
              Date.parse(question.created_at),
              question.id,
            ),
          redis.pipeline(),
        ),
      );
    }),
  );
}
