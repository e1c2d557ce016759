import type { ChainableCommander } from 'ioredis';
import {
  type ContextView,
  contextViewSchema,
  decodeChatEntries,
  decodeChatEntry,
  emptyContextView,
  type Message,
} from '../chat/index.js';
import type { StoredEvent } from '../events/event.js';
import { parseJsonRecord } from '../schemas/parse.js';
import type { MemoryStore, SessionDataStore } from '../tools/index.js';
import type { NextStep } from '../workflows/index.js';
import { attemptsKept } from '../workflows/journal.js';
import { pendingMessageSchema } from '../workflows/pending-message.js';
import type { QuestionRecord } from '../workflows/question-record.js';
import { type RunRecord, type StoredRun, treeRootOf } from '../workflows/run-record.js';
import type {
  BeginToolCall,
  BeginToolCallResult,
  CommitRequest,
  CommitResult,
  SteerCommit,
  ToolOutcomeCommit,
} from '../workflows/steps/runner/step-commit.js';
import type { StepAnswer, StepStore, StepStores } from '../workflows/steps/runner/step-store.js';
import { extendChat, knownChatLength } from './chat-cache.js';
import type { RedisClient } from './connection.js';
import { agentUsageKey, chatKey, chatViewKey, type KeySpace, runKeys, sessionDataKeys } from './keys.js';
import { redisMemory } from './memory-store.js';
import {
  answerQuestion,
  closeQuestionsOfRun,
  readQuestion,
  readRememberedApprovals,
} from './question-store.js';
import {
  beginToolCall,
  type CompletionInCommit,
  commitSteers,
  commitStep,
  commitToolOutcome,
  encodeEvent,
  execPipeline,
  loadRun,
  parseRun,
  readChat,
  type StepWrite,
  stepWriteOf,
} from './run-store.js';
import { runScript } from './scripts.js';
import { redisSessionData } from './session-data-store.js';

/** The store of one execution as src/redis opens it: the port, and where it writes (for tests and the shell). */
export interface RedisStepStore extends StepStore {
  readonly write: StepWrite;
}

export interface RedisStepStores extends StepStores {
  open(...args: Parameters<StepStores['open']>): RedisStepStore;
}

/** The step stores of a worker, on its command connection. */
export function redisStepStores(
  redis: RedisClient,
  space: KeySpace,
  eventsMaxLength: number,
  /** The next steps as the jobs a commit adds in its call (StepQueues.jobsInCommit); absent: never. */
  jobsInCommit?: JobsInCommit,
  /** The job's completion in a commit that adds the next jobs (decision 0056); absent: never. */
  completions?: CompletionsInCommit,
): RedisStepStores {
  return {
    open: (job, jobId, token, attempt) =>
      new StepStoreOnRedis(
        redis,
        space,
        stepWriteOf({ space, job, jobId, token, eventsMaxLength, attempt }),
        job.session_id,
        job.run_id,
        jobsInCommit,
        completions,
      ),
  };
}

/** Encodes steps as the jobs a commit script adds ('' = they are added after the commit instead). */
export type JobsInCommit = (next: readonly NextStep[]) => string;

/**
 * The completion of an execution's own job in its commit, by the job's lock token (decision 0056): asked for
 * by a commit that adds the next steps' jobs (its step writes nothing after it); undefined: not this time.
 */
export type CompletionsInCommit = (token: string) => CompletionInCommit | undefined;

/**
 * A class, not an object of closures: one is built for every execution of every step, and its methods are
 * shared on the prototype. What only some steps need (the session data store) is built on first use.
 */
class StepStoreOnRedis implements RedisStepStore {
  private sessionDataStore: SessionDataStore | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly space: KeySpace,
    readonly write: StepWrite,
    private readonly sessionId: string,
    private readonly runId: string,
    private readonly jobsInCommit: JobsInCommit | undefined,
    private readonly completions: CompletionsInCommit | undefined,
  ) {}

  /** The jobs a commit adds, and with them the completion of its own job: the step writes nothing after. */
  private inCommit(next: readonly NextStep[] | undefined): {
    jobs: string;
    completion?: CompletionInCommit | undefined;
  } {
    const jobs = next && this.jobsInCommit ? this.jobsInCommit(next) : '';
    return jobs && this.completions ? { jobs, completion: this.completions(this.write.token) } : { jobs };
  }

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

  commit<JournalValue>(request: CommitRequest<JournalValue>): Promise<CommitResult> {
    const sums = request.usageSums;
    return commitStep(this.redis, {
      ...this.write,
      ...request,
      ...this.inCommit(request.next),
      ...(sums?.agent === undefined
        ? {}
        : { agentUsageKey: agentUsageKey(this.space, this.write.keys.shard, sums.agent) }),
      ...(sums ? { treeUsageKey: runKeys(this.space, this.sessionId, sums.treeRoot).treeUsage } : {}),
    });
  }

  beginToolCall(begin: BeginToolCall): Promise<BeginToolCallResult> {
    return beginToolCall(this.redis, { ...this.write, ...begin });
  }

  commitToolOutcome(commit: ToolOutcomeCommit): Promise<CommitResult> {
    return commitToolOutcome(this.redis, { ...this.write, ...commit, ...this.inCommit(commit.next) });
  }

  commitSteers(commit: SteerCommit): Promise<CommitResult> {
    return commitSteers(this.redis, { ...this.write, ...commit });
  }

  async loadIteration(fields: readonly string[], countField = '') {
    const { keys, chatKey } = this.write;
    // A chat only grows: only the entries after the ones this process holds are read (chat-cache.ts).
    const from = knownChatLength(chatKey);
    const [runFields, journal, entries, chatLength, view, steered, counted] = (await runScript(
      this.redis,
      'load-iteration',
      [keys.run, keys.journal, chatKey, chatViewKey(chatKey), keys.steers],
      [
        from,
        this.write.attempt?.field ?? '',
        this.write.attempt?.note ?? '',
        attemptsKept,
        countField,
        ...fields,
      ],
    )) as unknown as [
      (string | null)[],
      (string | null)[],
      string[],
      number,
      string | null,
      string[],
      number,
    ];
    const run = this.runOf(runFields);
    return {
      run,
      journal,
      counted: counted === 1,
      chat: run ? await this.wholeChat(from, entries, chatLength) : [],
      view: decodeView(view, `the context view of ${chatKey}`),
      steered: steered.map((entry, index) =>
        parseJsonRecord(pendingMessageSchema, entry, `steered message ${index} of ${this.runId}`),
      ),
    };
  }

  /** The whole chat: what this process holds of it, and the entries read after that. */
  private async wholeChat(from: number, entries: readonly string[], length: number): Promise<Message[]> {
    const { chatKey } = this.write;
    const extended = extendChat(chatKey, from, decodeChatEntries(entries, chatKey, from), length);
    if (extended) return extended;
    // What this process held does not fit the chat any more: read it whole.
    const whole = await this.readChat();
    return extendChat(chatKey, 0, whole, whole.length) ?? whole;
  }

  async loadWithChat(fields: readonly string[]) {
    const [run, journal, entries] = await this.loadWith(fields, (pipeline, chatKey) =>
      pipeline.lrange(chatKey, 0, -1),
    );
    return { run, journal, chat: decodeChatEntries(entries as string[], this.write.chatKey) };
  }

  async loadWithChatEntry(fields: readonly string[], index: number) {
    const [run, journal, entry] = await this.loadWith(fields, (pipeline, chatKey) =>
      pipeline.lindex(chatKey, index),
    );
    const where = `chat entry ${index} of ${this.write.chatKey}`;
    return { run, journal, entry: entry ? decodeChatEntry(entry as string, where) : undefined };
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

  readQuestion(questionId: string) {
    return readQuestion(this.redis, this.space, this.sessionId, questionId);
  }

  answerQuestion(answer: StepAnswer) {
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

  rememberedApprovals() {
    return readRememberedApprovals(this.redis, this.space, this.sessionId);
  }

  async approveByRemembered(record: QuestionRecord, event: StoredEvent, approval: string) {
    const { keys, lockKey, token, eventsMaxLength } = this.write;
    const [code] = await runScript(
      this.redis,
      'remembered-approval',
      [lockKey, keys.run, keys.questions, keys.events, sessionDataKeys(this.space, this.sessionId).approvals],
      [token, record.id, JSON.stringify(record), encodeEvent(event), eventsMaxLength, approval],
    );
    return code as 'OK' | 'EXISTS' | 'REVOKED' | 'LOCK_LOST' | 'NO_RUN' | 'RUN_FINISHED';
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
  return runKeys(space, run.session_id, treeRootOf(run)).treeUsage;
}

/** The chat's context view as stored beside it (none: nothing summarised yet). */
function decodeView(json: string | null, where: string): ContextView {
  return json === null ? emptyContextView : parseJsonRecord(contextViewSchema, json, where);
}
