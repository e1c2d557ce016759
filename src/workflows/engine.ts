import { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { encodeChatEntry, type Message, type Part } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import { buildEvent, type RatchetEvent, storedEventSchema } from '../events/event.js';
import type { Logger } from '../log/index.js';
import { zeroUsage } from '../models/usage.js';
import { chatKey, type KeySpace, mainChatId, runKeys, sessionKeys } from '../redis/keys.js';
import { defineScripts } from '../redis/scripts.js';
import { parseRecord } from '../schemas/parse.js';
import { messageId, newRunId, newSessionId, sessionIdOfRun, stepJobId } from './ids.js';
import type { IterationJobData } from './job-data.js';
import { isFinished, type RunRecord } from './run-record.js';
import type { SessionRecord } from './session-record.js';
import { type StepJobSettings, StepQueues, stepJobName } from './step-queues.js';
import { encodeEvent, loadRun, readChat } from './store.js';

export interface EngineOptions {
  /** A connection for commands (not blocking); the engine does not close it. */
  redis: Redis;
  space: KeySpace;
  jobs: StepJobSettings;
  eventsMaxLength: number;
  /** Agent names a run may be started with; the first is the default. */
  agents: readonly string[];
  defaultAgent: string;
  logger: Logger;
  now?: () => Date;
}

export interface StartRunInput {
  input: string | Part[];
  agent?: string;
  /** Continue this session's chat; a new session is created when omitted. */
  sessionId?: string;
  /** Stored on a new session. */
  metadata?: Record<string, unknown>;
}

export interface StartedRun {
  runId: string;
  sessionId: string;
}

/**
 * The programmatic face of the durable engine: start runs, read them, wait for them, read chats and events.
 * It records and enqueues; it never runs a model or a tool (workers do).
 */
export class Engine {
  readonly queues: StepQueues;
  private readonly now: () => Date;

  constructor(private readonly options: EngineOptions) {
    defineScripts(options.redis);
    this.queues = new StepQueues(options.redis, options.space, options.jobs, options.logger);
    this.now = options.now ?? (() => new Date());
  }

  get space(): KeySpace {
    return this.options.space;
  }

  async startRun(input: StartRunInput): Promise<StartedRun> {
    const sessionId = input.sessionId ?? newSessionId();
    const session = sessionKeys(this.options.space, sessionId);
    const agent = input.agent ?? (await this.sessionAgent(sessionId)) ?? this.options.defaultAgent;
    if (!this.options.agents.includes(agent)) {
      throw new RatchetError(
        'agent_not_found',
        `unknown agent "${agent}" (known: ${this.options.agents.join(', ')})`,
      );
    }
    const runId = newRunId(sessionId);
    const keys = runKeys(this.options.space, sessionId, runId);
    const chat = chatKey(this.options.space, sessionId, mainChatId);
    const now = this.now().toISOString();
    const parts: Part[] =
      typeof input.input === 'string' ? [{ type: 'text', text: input.input }] : input.input;
    const message: Message = {
      id: messageId.input(runId),
      sender: 'user',
      role: 'user',
      parts,
      metadata: {},
      created_at: now,
    };
    const record: RunRecord = {
      v: 1,
      id: runId,
      session_id: sessionId,
      agent,
      chat_id: mainChatId,
      status: 'queued',
      iteration: 0,
      usage: { ...zeroUsage },
      result: null,
      error: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    };
    const sessionRecord: SessionRecord | undefined =
      input.sessionId === undefined
        ? { v: 1, id: sessionId, agent, metadata: input.metadata ?? {}, created_at: now }
        : undefined;
    const inputText = parts.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
    const firstStep: IterationJobData = {
      v: 1,
      session_id: sessionId,
      run_id: runId,
      agent,
      iteration: 1,
      previous_calls: 0,
    };

    for (let tries = 0; tries < 5; tries += 1) {
      const chatLength = await this.options.redis.llen(chat);
      const events = [
        buildEvent('run_started', record, { input: inputText }, now),
        buildEvent('message_added', record, { chat_id: mainChatId, index: chatLength, message }, now),
      ];
      // The run and its first step are written in one transaction: no crash leaves a run without a step.
      const queue = this.queues.queue(session.shard);
      const client = await queue.backend.client;
      const transaction = client.multi();
      (transaction as unknown as Record<string, (...args: unknown[]) => unknown>).ratchetCreateRun?.(
        session.session,
        chat,
        session.events,
        keys.run,
        sessionRecord ? JSON.stringify(sessionRecord) : '',
        runId,
        JSON.stringify(record),
        chatLength,
        this.options.eventsMaxLength,
        1,
        encodeChatEntry(message),
        ...events.map(encodeEvent),
      );
      const jobId = stepJobId.iteration(runId, 1);
      await new Job(queue, stepJobName.iteration, firstStep, this.queues.jobOptions(jobId), jobId).addJob(
        transaction,
      );
      const results = await transaction.exec();
      if (!results)
        throw new RatchetError('redis_unavailable', 'the transaction creating the run was aborted');
      const [createError, createReply] = results[0] ?? [];
      if (createError) throw createError;
      const [code, detail] = createReply as string[];
      if (code === 'OK') return { runId, sessionId };
      // The transaction added the first step of a run that was not created; that step finds no run and ends.
      if (code === 'CONFLICT') continue;
      if (code === 'SESSION_BUSY') {
        throw new RatchetError('session_busy', `session ${sessionId} already has an active run: ${detail}`, {
          details: { active_run_id: detail },
        });
      }
      if (code === 'NO_SESSION') throw new RatchetError('run_not_found', `unknown session ${sessionId}`);
      throw new RatchetError('internal', `create-run returned ${code}`);
    }
    throw new RatchetError(
      'internal',
      `could not start a run on session ${sessionId}: its chat kept changing`,
    );
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const sessionId = sessionIdOfRun(runId);
    if (!sessionId) return undefined;
    const stored = await loadRun(this.options.redis, runKeys(this.options.space, sessionId, runId), runId);
    return stored?.record;
  }

  /** Resolves when the run is finished, or with its current state when the timeout passes. */
  async waitForRun(runId: string, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<RunRecord> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    const pollMs = options.pollMs ?? 50;
    for (;;) {
      const run = await this.getRun(runId);
      if (!run) throw new RatchetError('run_not_found', `unknown run ${runId}`);
      if (isFinished(run.status) || Date.now() >= deadline) return run;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  async readChat(sessionId: string, options: { chatId?: string; from?: number } = {}): Promise<Message[]> {
    return readChat(
      this.options.redis,
      chatKey(this.options.space, sessionId, options.chatId ?? mainChatId),
      options.from ?? 0,
    );
  }

  /** Events after the given stream id (exclusive), oldest first. */
  async readEvents(
    sessionId: string,
    options: { after?: string; count?: number } = {},
  ): Promise<RatchetEvent[]> {
    const key = sessionKeys(this.options.space, sessionId).events;
    const start = options.after ? `(${options.after}` : '-';
    const entries = options.count
      ? await this.options.redis.xrange(key, start, '+', 'COUNT', options.count)
      : await this.options.redis.xrange(key, start, '+');
    return entries.map(([id, fields]) => {
      const text = fields[fields.indexOf('event') + 1] ?? '';
      const event = parseRecord(storedEventSchema, JSON.parse(text), `event ${id} of session ${sessionId}`);
      return { ...(event as RatchetEvent), id };
    });
  }

  private async sessionAgent(sessionId: string): Promise<string | undefined> {
    const text = await this.options.redis.hget(sessionKeys(this.options.space, sessionId).session, 'record');
    if (!text) return undefined;
    return (JSON.parse(text) as SessionRecord).agent;
  }

  async close(): Promise<void> {
    await this.queues.close();
  }
}
