import type { Telemetry } from 'bullmq';
import type { Message } from '../chat/index.js';
import type { RatchetEvent } from '../events/event.js';
import type { Logger } from '../log/index.js';
import { parseJsonRecord } from '../schemas/parse.js';
import type { SessionDataStore } from '../tools/index.js';
import type { RunCreation } from '../workflows/core/run-creation.js';
import { parseEntries } from '../workflows/event-entries.js';
import type { QuestionRecord, QuestionResponse } from '../workflows/question-record.js';
import type { RunCounts, RunFilter, RunPage, SessionFilter, SessionPage } from '../workflows/run-listing.js';
import type { StoredRun } from '../workflows/run-record.js';
import { type SessionRecord, sessionRecordSchema } from '../workflows/session-record.js';
import { largestStreamId } from '../workflows/stream-ids.js';
import type { SessionView } from '../workflows/views.js';
import { cancelRun } from './cancel-run.js';
import { closeRedis, duplicateClient, type RedisClient } from './connection.js';
import type { EngineContext } from './engine-context.js';
import { followEvents } from './event-follower.js';
import { EventHub } from './event-hub.js';
import { agentUsageKey, chatKey, type KeySpace, runKeys, sessionKeys } from './keys.js';
import { type AnswerResult, answerQuestion, pendingQuestions, readQuestion } from './question-store.js';
import { QueueScheduler } from './queue-scheduler.js';
import { countRuns, listRuns, listSessions } from './run-index.js';
import { loadRun, readChat } from './run-store.js';
import { type RunWriteCode, RunWriter } from './run-writer.js';
import { defineScripts } from './scripts.js';
import { redisSessionData } from './session-data-store.js';
import { createSession, deleteSession, getSession } from './session-store.js';
import { type StepJobSettings, StepQueues } from './step-queues.js';

export interface EngineStoreOptions {
  /** A connection for commands (not blocking); the store does not close it. */
  redis: RedisClient;
  space: KeySpace;
  jobs: StepJobSettings;
  eventsMaxLength: number;
  logger: Logger;
  /** Event followers served at once (config `api.max_followers`). */
  maxFollowers: number;
  now: () => Date;
  /** BullMQ's queue spans (its telemetry interface, src/telemetry/queue-telemetry.ts), when traces are on. */
  queueTelemetry?: Telemetry;
}

/**
 * Every read and write the engine's client face makes (start, read, answer, cancel, follow), so the engine
 * holds its rules and none of Redis: its connections, queues and event hub live here.
 */
export class EngineStore {
  readonly queues: StepQueues;
  readonly context: EngineContext;

  /**
   * BullMQ defines its ~60 scripts on the connection its queues use, and ioredis copies every defined script
   * into each pipeline it creates: the queues get a connection of their own, so the steps' pipelines stay cheap.
   */
  private readonly queueConnection: RedisClient;

  /** Wakes every event follower of this process from a few blocking connections (opened on first use). */
  private readonly eventHub: EventHub;

  /** Writes new runs with their first steps, on a connection of its own (it WATCHes). */
  private readonly runWriter: RunWriter;

  constructor(private readonly options: EngineStoreOptions) {
    defineScripts(options.redis);
    this.queueConnection = duplicateClient(options.redis, { connectionName: 'ratchet-queues' });
    this.queueConnection.on('error', () => {
      // Reported by the queues' own error listeners.
    });
    defineScripts(this.queueConnection);
    this.queues = new StepQueues(
      this.queueConnection,
      options.space,
      options.jobs,
      options.logger,
      options.queueTelemetry,
    );
    this.runWriter = new RunWriter({
      redis: options.redis,
      space: options.space,
      queues: this.queues,
      eventsMaxLength: options.eventsMaxLength,
    });
    this.eventHub = new EventHub({
      redis: options.redis,
      maxFollowers: options.maxFollowers,
      logger: options.logger,
    });
    this.context = {
      redis: options.redis,
      space: options.space,
      queues: this.queues,
      eventsMaxLength: options.eventsMaxLength,
      logger: options.logger,
      now: options.now,
      runCancelled: new Set(),
      questionClosed: new Set(),
    };
  }

  /** The scheduler port of the steps a worker runs, with the engine's cancellation. */
  scheduler(cancel: (runId: string, reason: string) => Promise<unknown>): QueueScheduler {
    return new QueueScheduler(this.queues, this.runWriter, this.options.space, cancel);
  }

  chatLength(sessionId: string, chatId: string): Promise<number> {
    return this.options.redis.llen(chatKey(this.options.space, sessionId, chatId));
  }

  /** Writes a planned run and adds its first step, in one transaction. */
  writeRun(
    plan: RunCreation,
    chatLength: number,
  ): Promise<{ code: RunWriteCode; detail: string | undefined }> {
    return this.runWriter.write({ plan, chatLength });
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
  }): Promise<AnswerResult> {
    const { result } = await answerQuestion(this.options.redis, this.options.space, {
      ...input,
      by: 'user',
      eventsMaxLength: this.options.eventsMaxLength,
    });
    return result;
  }

  /** Wakes a parked step of the session (its question was answered). */
  wakeStep(sessionId: string, jobId: string): Promise<void> {
    return this.queues.wake(sessionKeys(this.options.space, sessionId).shard, jobId);
  }

  cancelRun(runId: string, reason: string): Promise<void> {
    return cancelRun(this.context, runId, reason);
  }

  createSession(input: { agent: string; metadata?: Record<string, unknown> }): Promise<SessionView> {
    return createSession(this.context, input);
  }

  getSession(sessionId: string): Promise<SessionView | undefined> {
    return getSession(this.context, sessionId);
  }

  deleteSession(sessionId: string): Promise<boolean> {
    return deleteSession(this.context, sessionId);
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

  followEvents(
    sessionId: string,
    options: { after?: string; signal: AbortSignal },
  ): AsyncGenerator<RatchetEvent> {
    return followEvents(this.eventHub, this.options.redis, this.options.space, sessionId, options);
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

  async close(): Promise<void> {
    try {
      await this.eventHub.close();
      await this.runWriter.close();
      await this.queues.close();
    } finally {
      await closeRedis(this.queueConnection);
    }
  }
}
