import type { Message } from '../chat/index.js';
import type { RatchetEvent } from '../events/event.js';
import type { Logger } from '../log/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import type { SessionDataStore } from '../tools/index.js';
import { parseEntries } from '../workflows/event-entries.js';
import type { AnswerResult, QuestionRecord, QuestionResponse } from '../workflows/question-record.js';
import type { RememberedApproval } from '../workflows/remembered-approval-match.js';
import type { RunCounts, RunFilter, RunPage, SessionFilter, SessionPage } from '../workflows/run-listing.js';
import type { StoredRun } from '../workflows/run-record.js';
import { type SessionRecord, sessionRecordSchema } from '../workflows/session-record.js';
import { largestStreamId } from '../workflows/stream-ids.js';
import { duplicateClient, type RedisClient } from './connection.js';
import { agentUsageKey, chatKey, type KeySpace, runKeys, sessionKeys } from './keys.js';
import {
  answerQuestion,
  pendingQuestions,
  readQuestion,
  readRememberedApprovals,
  revokeRememberedApproval,
} from './question-store.js';
import { countRuns, listRuns, listSessions } from './run-index.js';
import { loadRun, readChat } from './run-store.js';
import { defineScripts } from './scripts.js';
import { redisSessionData } from './session-data-store.js';

export interface EngineStoreOptions {
  /** A connection for commands (not blocking); the store does not close it. */
  redis: RedisClient;
  space: KeySpace;
  eventsMaxLength: number;
  logger: Logger;
}

/**
 * The Redis commands of the engine's client face (src/engine) that name keys: a session's records, chats,
 * questions, events and usage, and the run index. The engine holds the rules and composes this store with
 * the queues, the run writer and the event hub; none of them is owned here.
 */
export class EngineStore {
  constructor(private readonly options: EngineStoreOptions) {
    defineScripts(options.redis);
  }

  chatLength(sessionId: string, chatId: string): Promise<number> {
    return this.options.redis.llen(chatKey(this.options.space, sessionId, chatId));
  }

  loadRun(sessionId: string, runId: string): Promise<StoredRun | undefined> {
    return loadRun(this.options.redis, runKeys(this.options.space, sessionId, runId), runId);
  }

  /** The run's last progress report, as stored (JSON), or null. */
  runProgress(sessionId: string, runId: string): Promise<string | null> {
    return this.options.redis.hget(runKeys(this.options.space, sessionId, runId).run, 'progress');
  }

  pendingQuestions(sessionId: string): Promise<QuestionRecord[]> {
    return pendingQuestions(this.options.redis, this.options.space, sessionId);
  }

  readQuestion(sessionId: string, questionId: string) {
    return readQuestion(this.options.redis, this.options.space, sessionId, questionId);
  }

  async answerQuestion(input: {
    sessionId: string;
    questionId: string;
    response: QuestionResponse;
    now: string;
    remember?: RememberedApproval;
  }): Promise<AnswerResult> {
    const { result } = await answerQuestion(this.options.redis, this.options.space, {
      ...input,
      by: 'user',
      eventsMaxLength: this.options.eventsMaxLength,
    });
    return result;
  }

  /** The session's remembered approvals (decision 0046), oldest first. */
  rememberedApprovals(sessionId: string): Promise<RememberedApproval[]> {
    return readRememberedApprovals(this.options.redis, this.options.space, sessionId);
  }

  /** Revokes a remembered approval: false when the session has none by that key. */
  revokeApproval(sessionId: string, key: string): Promise<boolean> {
    return revokeRememberedApproval(this.options.redis, this.options.space, sessionId, key);
  }

  /** The shard of a session: the step queue that runs its steps. */
  shardOf(sessionId: string): number {
    return sessionKeys(this.options.space, sessionId).shard;
  }

  async sessionRecord(sessionId: string): Promise<SessionRecord | undefined> {
    const text = await this.options.redis.hget(sessionKeys(this.options.space, sessionId).session, 'record');
    return text ? parseJsonRecord(sessionRecordSchema, text, `session ${sessionId}`) : undefined;
  }

  /** An agent's usage sums, one hash per shard. */
  async agentUsageByShard(agent: string): Promise<Record<string, string>[]> {
    // One command per shard, not a pipeline: on a cluster the shards' keys live on different nodes.
    return Promise.all(
      Array.from({ length: this.options.space.shards }, (_, shard) =>
        this.options.redis.hgetall(agentUsageKey(this.options.space, shard, agent)),
      ),
    );
  }

  /** A page of the run index, newest first (merged over the shards). */
  listRuns(filter: RunFilter): Promise<RunPage> {
    return listRuns(this.options.redis, this.options.space, filter, undefined, (runId, problem) =>
      // Listed with what the index knows; the record itself fails loudly wherever it is read in full.
      this.options.logger.warn({ run_id: runId, problem }, 'run record does not parse; listed without it'),
    );
  }

  /** Runs per listed status over every shard (created since `sinceMs` when given). */
  countRuns(sinceMs?: number): Promise<RunCounts> {
    return countRuns(this.options.redis, this.options.space, sinceMs);
  }

  /** A page of sessions by last activity, newest first. */
  listSessions(filter: SessionFilter): Promise<SessionPage> {
    return listSessions(this.options.redis, this.options.space, filter);
  }

  /** What a session's agents wrote (state, tasks, notes), for reading from outside. */
  sessionData(sessionId: string): SessionDataStore {
    return redisSessionData(this.options.redis, this.options.space, sessionId);
  }

  readChat(sessionId: string, chatId: string, from: number): Promise<Message[]> {
    return readChat(this.options.redis, chatKey(this.options.space, sessionId, chatId), from);
  }

  /** Events after the given stream id (exclusive), oldest first. */
  async readEvents(sessionId: string, options: { after?: string; count?: number }): Promise<RatchetEvent[]> {
    if (options.after === largestStreamId) return [];
    const key = sessionKeys(this.options.space, sessionId).events;
    const start = options.after ? `(${options.after}` : '-';
    const entries = options.count
      ? await this.options.redis.xrange(key, start, '+', 'COUNT', options.count)
      : await this.options.redis.xrange(key, start, '+');
    return parseEntries(entries, sessionId);
  }

  async lastEventId(sessionId: string): Promise<string | undefined> {
    const key = sessionKeys(this.options.space, sessionId).events;
    const [newest] = await this.options.redis.xrevrange(key, '+', '-', 'COUNT', 1);
    return newest?.[0];
  }
}

/**
 * A connection of its own for the step queues, with our scripts defined on it. BullMQ defines its ~60
 * scripts on the connection its queues use, and ioredis copies every defined script into each pipeline it
 * creates: on a connection of their own, the steps' pipelines stay cheap. Closed with `closeRedis`.
 */
export function openQueueConnection(redis: RedisClient): RedisClient {
  const connection = duplicateClient(redis, { connectionName: 'ratchet-queues' });
  connection.on('error', () => {
    // Reported by the queues' own error listeners.
  });
  defineScripts(connection);
  return connection;
}
