import { RatchetError } from '../errors/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import { newSessionId } from '../workflows/ids.js';
import { pendingMessageSchema } from '../workflows/pending-message.js';
import { runRecordSchema } from '../workflows/run-record.js';
import { type SessionRecord, sessionRecordSchema } from '../workflows/session-record.js';
import { type SessionView, usageTotalsOf } from '../workflows/views.js';
import { cancelRun } from './cancel-run.js';
import type { RedisClient } from './connection.js';
import type { EngineContext } from './engine-context.js';
import {
  chatKey,
  chatViewKey,
  type KeySpace,
  mainChatId,
  retentionKeys,
  runKeys,
  sessionDataKeys,
  sessionKeys,
} from './keys.js';
import { unindexRuns } from './run-index.js';
import { execPipeline } from './run-store.js';

export async function createSession(
  context: EngineContext,
  input: { agent: string; metadata?: Record<string, unknown>; tenant: string },
): Promise<SessionView> {
  const record: SessionRecord = {
    v: 1,
    id: newSessionId(),
    agent: input.agent,
    metadata: input.metadata ?? {},
    created_at: context.now().toISOString(),
    tenant: input.tenant,
  };
  const keys = sessionKeys(context.space, record.id);
  // In the shard's activity index from the start, so GET /v1/sessions lists it before its first run (and
  // retention removes it when it stays unused past its window).
  await execPipeline(
    context.redis
      .multi()
      .hsetnx(keys.session, 'record', JSON.stringify(record))
      .zadd(retentionKeys(context.space, keys.shard).sessions, Date.parse(record.created_at), keys.session),
  );
  return { ...record, status: 'idle', active_run_id: null, usage: usageTotalsOf({}) };
}

export async function getSession(
  context: EngineContext,
  sessionId: string,
): Promise<SessionView | undefined> {
  const keys = sessionKeys(context.space, sessionId);
  const [[record, activeRun], usage, queued] = (await execPipeline(
    context.redis
      .pipeline()
      .hmget(keys.session, 'record', 'active_run')
      .hgetall(keys.usage)
      .lrange(keys.queued, 0, -1),
  )) as [(string | null)[], Record<string, string>, string[]];
  if (!record) return undefined;
  const session = parseJsonRecord(sessionRecordSchema, record, `session ${sessionId}`);
  return {
    ...session,
    status: activeRun ? 'active' : 'idle',
    active_run_id: activeRun ?? null,
    usage: usageTotalsOf(usage),
    queued_messages: queued.map((entry, index) =>
      parseJsonRecord(pendingMessageSchema, entry, `queued message ${index} of session ${sessionId}`),
    ),
  };
}

/**
 * Every key of a session but its hash, its set of run ids and its pending questions (which deleting and
 * expiring a session name apart): its events, questions, usage, the toolboxes' data, every chat with its view
 * and each run's keys. Found from the run ids and the runs' records rather than by SCAN, which a Redis Cluster
 * answers per node.
 */
export async function sessionContentKeys(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runIds: readonly string[],
): Promise<string[]> {
  const session = sessionKeys(space, sessionId);
  const runKeyList = runIds.flatMap((runId) => {
    const keys = runKeys(space, sessionId, runId);
    return [keys.run, keys.journal, keys.children, keys.treeUsage, keys.waits, keys.signals, keys.steers];
  });
  return [
    session.usage,
    session.events,
    session.questions,
    session.queued,
    ...Object.values(sessionDataKeys(space, sessionId)),
    ...(await sessionChatKeys(redis, space, sessionId, runIds)),
    ...runKeyList,
  ];
}

/**
 * Every chat of a session and its context view: the main chat and the chat of each run (a child run's, a team
 * member's), found from the runs' records.
 */
async function sessionChatKeys(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runIds: readonly string[],
): Promise<string[]> {
  const records = await Promise.all(
    runIds.map((runId) => redis.hget(runKeys(space, sessionId, runId).run, 'record')),
  );
  const chats = new Set([chatKey(space, sessionId, mainChatId)]);
  // Thread chats outlive the runs that worked on them (delegations with a `thread`): listed on their own.
  for (const chatId of await redis.hkeys(sessionDataKeys(space, sessionId).threads))
    chats.add(chatKey(space, sessionId, chatId));
  records.forEach((json, index) => {
    if (json)
      chats.add(
        chatKey(space, sessionId, parseJsonRecord(runRecordSchema, json, `run ${runIds[index]}`).chat_id),
      );
  });
  return [...chats].flatMap((chat) => [chat, chatViewKey(chat)]);
}

/** Cancels the active run, then deletes everything of the session. False when there is no such session. */
export async function deleteSession(context: EngineContext, sessionId: string): Promise<boolean> {
  const session = await getSession(context, sessionId);
  if (!session) return false;
  if (session.active_run_id) {
    try {
      await cancelRun(context, session.active_run_id, 'session deleted');
    } catch (error) {
      if (!(error instanceof RatchetError && error.code === 'run_finished')) throw error;
    }
  }
  const keys = sessionKeys(context.space, sessionId);
  const runIds = await context.redis.smembers(keys.runs);
  await context.redis.unlink(
    keys.session,
    keys.runs,
    keys.pending,
    ...(await sessionContentKeys(context.redis, context.space, sessionId, runIds)),
  );
  await unindexRuns(context.redis, context.space, sessionId, runIds);
  // Its runs leave the finished-runs index when a sweep finds them gone.
  await context.redis.zrem(retentionKeys(context.space, keys.shard).sessions, keys.session);
  return true;
}
