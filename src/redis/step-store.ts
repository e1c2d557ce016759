import type { ChainableCommander } from 'ioredis';
import type { Message } from '../chat/index.js';
import type { StoredEvent } from '../events/event.js';
import type { MemoryStore, SessionDataStore } from '../tools/index.js';
import { type AttemptStart, attemptsKept } from '../workflows/journal.js';
import type { QuestionRecord } from '../workflows/question-record.js';
import type { RunRecord, StoredRun } from '../workflows/run-record.js';
import type { RedisClient } from './connection.js';
import { agentUsageKey, chatKey, chatViewKey, type KeySpace, runKeys, sessionDataKeys } from './keys.js';
import { redisMemory } from './memory-store.js';
import { answerQuestion, closeQuestionsOfRun, readQuestion } from './question-store.js';
import {
  type BeginToolCall,
  type BeginToolCallResult,
  beginToolCall,
  type CommitRequest,
  type CommitResult,
  commitStep,
  commitToolOutcome,
  encodeEvent,
  execPipeline,
  loadRun,
  parseRun,
  readChat,
  type StepWrite,
  stepWriteOf,
  type ToolOutcomeCommit,
} from './run-store.js';
import { runScript } from './scripts.js';
import { redisSessionData } from './session-data-store.js';

/** A request of one step, without where it writes (the step store adds that). */
export type OwnPart<Request> = Omit<Request, keyof StepWrite>;

/**
 * The reads and commits one execution of a step makes on its own run, built once per execution from the job
 * (`write`: the run's keys, its chat, the job's lock key and token). Every commit is fenced by that token.
 */
export interface StepStore {
  readonly write: StepWrite;
  loadRun(): Promise<StoredRun | undefined>;
  commit<JournalValue>(request: OwnPart<CommitRequest<JournalValue>>): Promise<CommitResult>;
  beginToolCall(begin: OwnPart<BeginToolCall>): Promise<BeginToolCallResult>;
  commitToolOutcome(commit: OwnPart<ToolOutcomeCommit>): Promise<CommitResult>;
  /**
   * One round trip (load-iteration.lua): the run, journal fields, the chat's entries from position `from` on,
   * the chat's length and its context view.
   */
  loadIteration(
    from: number,
    fields: readonly string[],
  ): Promise<{
    run: StoredRun | undefined;
    journal: (string | null)[];
    entries: string[];
    chatLength: number;
    /** The chat's context view (JSON), null when nothing was summarised yet. */
    view: string | null;
  }>;
  /** One round trip: the run, journal fields and every entry of the chat (a team turn's shared chat). */
  loadWithChat(
    fields: readonly string[],
  ): Promise<{ run: StoredRun | undefined; journal: (string | null)[]; entries: string[] }>;
  /** One round trip: the run, journal fields and one chat entry (the reply that made a tool call). */
  loadWithChatEntry(
    fields: readonly string[],
    index: number,
  ): Promise<{ run: StoredRun | undefined; journal: (string | null)[]; entry: string | null }>;
  /** Runs of this run's session by id, in the order asked (undefined where a run does not exist). */
  loadRuns(runIds: readonly string[]): Promise<(StoredRun | undefined)[]>;
  /** The length of a chat of this run's session. */
  chatLength(chatId: string): Promise<number>;
  /** Where the usage of a run's whole tree is summed (a commit adds the reply's usage there too). */
  treeUsageKey(record: Pick<RunRecord, 'session_id' | 'id' | 'root_run_id'>): string;
  /** The key of an agent's usage sums on this run's shard (a commit adds the reply's usage there too). */
  agentUsageKey(agent: string): string;
  /** The data the session's agents share (state, tasks, notes): a tool call's `session.data`. */
  readonly sessionData: SessionDataStore;
  /** Memory that outlives sessions (the `memory` toolbox): a tool call's `memory`. */
  readonly memory: MemoryStore;
  /** A question of the session, as stored. */
  readQuestion(questionId: string): Promise<{ record: QuestionRecord; text: string } | undefined>;
  /** Answers a question of the session once (answer-question.lua). */
  answerQuestion(
    answer: Omit<Parameters<typeof answerQuestion>[2], 'sessionId' | 'eventsMaxLength'>,
  ): ReturnType<typeof answerQuestion>;
  /** Closes the pending questions of this (finished) run. */
  closeQuestionsOfRun(): Promise<void>;
  /** Records the step's question and its ask_user event, fenced (ask-question.lua). */
  askQuestion(
    record: QuestionRecord,
    event: StoredEvent,
  ): Promise<'OK' | 'LOCK_LOST' | 'NO_RUN' | 'RUN_FINISHED'>;
  /** Records a progress report of the step and its event, fenced, once per field (report-progress.lua). */
  reportProgress(field: string, valueJson: string, event: StoredEvent): Promise<'OK' | 'LOCK_LOST' | string>;
  /** Appends an event that is not a state change (a text delta), unfenced: its attempt tells clients apart. */
  appendTransientEvent(event: StoredEvent): Promise<unknown>;
  /** The run's chat from position `from` on. */
  readChat(from?: number): Promise<Message[]>;
  /** Journal fields of the run, in the order asked (null where a field is not written). */
  journalFields(fields: readonly string[]): Promise<(string | null)[]>;
  hasJournalField(field: string): Promise<boolean>;
  /**
   * Sets a journal field unless it is set, and returns what it holds: the first execution's value wins, every
   * later one reads it. Not fenced: for values any execution of the step would compute alike.
   */
  recordJournalOnce(field: string, value: string): Promise<string>;
  /** The latest run that worked on a thread chat of this session (a delegation's `thread`), or null. */
  threadRun(chatId: string): Promise<string | null>;
  /** Notes the run that works on a thread chat now (the thread's chat then goes with the session). */
  recordThreadRun(chatId: string, runId: string): Promise<void>;
  /** Marks the step parked until `wakeAt` in its journal field `field`, fenced (mark-parked.lua); false: lock lost. */
  markParked(field: string, wakeAt: number): Promise<boolean>;
  /** Adds `by` to a counter in the run's journal (model calls started), without a fence: it only counts. */
  countInJournal(field: string, by: number): Promise<number>;
  /** What the run's whole tree has used so far (kept on its root run, for the root's run budget). */
  treeUsage(record: Pick<RunRecord, 'session_id' | 'id' | 'root_run_id'>): Promise<{
    tokens: number;
    costUsd: number;
  }>;
}

/** Opens the store of one execution of a step job: where it writes is built once, from the job. */
export interface StepStores {
  /** `attempt`: this execution, noted in the step's attempts record by the first script it runs. */
  open(
    job: { session_id: string; run_id: string; chat_id: string },
    jobId: string,
    token: string,
    attempt?: AttemptStart,
  ): StepStore;
}

/** The step stores of a worker, on its command connection. */
export function redisStepStores(redis: RedisClient, space: KeySpace, eventsMaxLength: number): StepStores {
  return {
    open: (job, jobId, token, attempt) =>
      new RedisStepStore(
        redis,
        space,
        stepWriteOf({ space, job, jobId, token, eventsMaxLength, attempt }),
        job.session_id,
        job.run_id,
      ),
  };
}

/**
 * A class, not an object of closures: one is built for every execution of every step, and its methods are
 * shared on the prototype. What only some steps need (the session data store) is built on first use.
 */
class RedisStepStore implements StepStore {
  private sessionDataStore: SessionDataStore | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly space: KeySpace,
    readonly write: StepWrite,
    private readonly sessionId: string,
    private readonly runId: string,
  ) {}

  get sessionData(): SessionDataStore {
    this.sessionDataStore ??= redisSessionData(this.redis, this.space, this.sessionId);
    return this.sessionDataStore;
  }

  get memory(): MemoryStore {
    return redisMemory(this.redis, this.space);
  }

  loadRun(): Promise<StoredRun | undefined> {
    return loadRun(this.redis, this.write.keys, this.runId);
  }

  commit<JournalValue>(request: OwnPart<CommitRequest<JournalValue>>): Promise<CommitResult> {
    return commitStep(this.redis, { ...this.write, ...request });
  }

  beginToolCall(begin: OwnPart<BeginToolCall>): Promise<BeginToolCallResult> {
    return beginToolCall(this.redis, { ...this.write, ...begin });
  }

  commitToolOutcome(commit: OwnPart<ToolOutcomeCommit>): Promise<CommitResult> {
    return commitToolOutcome(this.redis, { ...this.write, ...commit });
  }

  async loadIteration(from: number, fields: readonly string[]) {
    const { keys, chatKey } = this.write;
    const [runFields, journal, entries, chatLength, view] = (await runScript(
      this.redis,
      'load-iteration',
      [keys.run, keys.journal, chatKey, chatViewKey(chatKey)],
      [from, this.write.attempt?.field ?? '', this.write.attempt?.note ?? '', attemptsKept, ...fields],
    )) as unknown as [(string | null)[], (string | null)[], string[], number, string | null];
    return { run: this.runOf(runFields), journal, entries, chatLength, view };
  }

  async loadWithChat(fields: readonly string[]) {
    const [run, journal, entries] = await this.loadWith(fields, (pipeline, chatKey) =>
      pipeline.lrange(chatKey, 0, -1),
    );
    return { run, journal, entries: entries as string[] };
  }

  async loadWithChatEntry(fields: readonly string[], index: number) {
    const [run, journal, entry] = await this.loadWith(fields, (pipeline, chatKey) =>
      pipeline.lindex(chatKey, index),
    );
    return { run, journal, entry: entry as string | null };
  }

  /** One round trip: the run, journal fields, and what `readChat` adds to the pipeline. */
  private async loadWith(
    fields: readonly string[],
    readChat: (pipeline: ChainableCommander, chatKey: string) => ChainableCommander,
  ): Promise<[StoredRun | undefined, (string | null)[], unknown]> {
    const { keys, chatKey } = this.write;
    const pipeline = this.redis
      .pipeline()
      .hmget(keys.run, 'record', 'rev')
      .hmget(keys.journal, ...fields);
    const [runFields, journal, chat] = await execPipeline(readChat(pipeline, chatKey));
    return [this.runOf(runFields as (string | null)[]), journal as (string | null)[], chat];
  }

  async loadRuns(runIds: readonly string[]): Promise<(StoredRun | undefined)[]> {
    const pipeline = this.redis.pipeline();
    for (const id of runIds) pipeline.hmget(runKeys(this.space, this.sessionId, id).run, 'record', 'rev');
    const replies = (await execPipeline(pipeline)) as (string | null)[][];
    return replies.map(([record, rev], index) =>
      record ? parseRun(record, rev ?? null, `run ${runIds[index]}`) : undefined,
    );
  }

  chatLength(chatId: string): Promise<number> {
    return this.redis.llen(chatKey(this.space, this.sessionId, chatId));
  }

  treeUsageKey(record: Pick<RunRecord, 'session_id' | 'id' | 'root_run_id'>): string {
    return treeUsageKeyOf(this.space, record);
  }

  agentUsageKey(agent: string): string {
    return agentUsageKey(this.space, this.write.keys.shard, agent);
  }

  readQuestion(questionId: string) {
    return readQuestion(this.redis, this.space, this.sessionId, questionId);
  }

  answerQuestion(answer: Omit<Parameters<typeof answerQuestion>[2], 'sessionId' | 'eventsMaxLength'>) {
    return answerQuestion(this.redis, this.space, {
      ...answer,
      sessionId: this.sessionId,
      eventsMaxLength: this.write.eventsMaxLength,
    });
  }

  closeQuestionsOfRun(): Promise<void> {
    return closeQuestionsOfRun(this.redis, this.space, this.sessionId, this.runId);
  }

  async askQuestion(record: QuestionRecord, event: StoredEvent) {
    const { keys, lockKey, token, eventsMaxLength } = this.write;
    const [code] = await runScript(
      this.redis,
      'ask-question',
      [lockKey, keys.run, keys.questions, keys.pending, keys.events, keys.runIndex],
      [token, record.id, JSON.stringify(record), encodeEvent(event), eventsMaxLength],
    );
    return code as 'OK' | 'LOCK_LOST' | 'NO_RUN' | 'RUN_FINISHED';
  }

  async reportProgress(field: string, valueJson: string, event: StoredEvent) {
    const { keys, lockKey, token, eventsMaxLength } = this.write;
    const [code] = await runScript(
      this.redis,
      'report-progress',
      [lockKey, keys.run, keys.journal, keys.events],
      [token, field, valueJson, encodeEvent(event), eventsMaxLength],
    );
    return code ?? '';
  }

  appendTransientEvent(event: StoredEvent): Promise<unknown> {
    const { keys, eventsMaxLength } = this.write;
    return this.redis.xadd(keys.events, 'MAXLEN', '~', eventsMaxLength, '*', 'event', encodeEvent(event));
  }

  readChat(from = 0): Promise<Message[]> {
    return readChat(this.redis, this.write.chatKey, from);
  }

  journalFields(fields: readonly string[]): Promise<(string | null)[]> {
    return fields.length === 0 ? Promise.resolve([]) : this.redis.hmget(this.write.keys.journal, ...fields);
  }

  async hasJournalField(field: string): Promise<boolean> {
    return (await this.redis.hexists(this.write.keys.journal, field)) === 1;
  }

  threadRun(chatId: string): Promise<string | null> {
    return this.redis.hget(sessionDataKeys(this.space, this.sessionId).threads, chatId);
  }

  async recordThreadRun(chatId: string, runId: string): Promise<void> {
    await this.redis.hset(sessionDataKeys(this.space, this.sessionId).threads, chatId, runId);
  }

  async recordJournalOnce(field: string, value: string): Promise<string> {
    const replies = await this.redis
      .multi()
      .hsetnx(this.write.keys.journal, field, value)
      .hget(this.write.keys.journal, field)
      .exec();
    const stored = replies?.[1]?.[1];
    if (typeof stored !== 'string') throw new Error(`journal field ${field} was not recorded`);
    return stored;
  }

  async markParked(field: string, wakeAt: number): Promise<boolean> {
    const { lockKey, keys, token, attempt } = this.write;
    // A wake time past what a date can say (a park with no timeout) is left out of the attempt's note.
    const wakes = new Date(wakeAt);
    const [marked] = await runScript(
      this.redis,
      'mark-parked',
      [lockKey, keys.journal],
      [
        token,
        field,
        String(wakeAt),
        attempt?.field ?? '',
        new Date().toISOString(),
        Number.isNaN(wakes.getTime()) ? '' : wakes.toISOString(),
        attempt?.note ?? '',
        attemptsKept,
      ],
    );
    return marked === 'OK';
  }

  countInJournal(field: string, by: number): Promise<number> {
    return this.redis.hincrby(this.write.keys.journal, field, by);
  }

  async treeUsage(record: Pick<RunRecord, 'session_id' | 'id' | 'root_run_id'>) {
    const sums = await this.redis.hmget(
      treeUsageKeyOf(this.space, record),
      'input_tokens',
      'output_tokens',
      'cost_usd',
    );
    const [input = 0, output = 0, cost = 0] = sums.map((value) => Number(value ?? 0));
    return { tokens: input + output, costUsd: cost };
  }

  private runOf([record, rev]: (string | null)[]): StoredRun | undefined {
    return record ? parseRun(record, rev ?? null, `run ${this.runId}`) : undefined;
  }
}

/** Where the usage of a run's whole tree is summed: on its root run (its run budget covers the tree). */
export function treeUsageKeyOf(
  space: KeySpace,
  run: Pick<RunRecord, 'session_id' | 'id' | 'root_run_id'>,
): string {
  return runKeys(space, run.session_id, run.root_run_id ?? run.id).treeUsage;
}
