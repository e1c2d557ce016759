import type { Redis } from 'ioredis';
import type { Message } from '../chat/index.js';
import type { StoredEvent } from '../events/event.js';
import { agentUsageKey, type KeySpace, sessionKeys } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import { redisSessionData, type SessionDataStore } from '../redis/session-data-store.js';
import { treeUsageKeyOf } from './child-runs.js';
import type { QuestionRecord } from './question-record.js';
import { answerQuestion, readQuestion } from './questions.js';
import type { RunRecord, StoredRun } from './run-record.js';
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
  type ToolOutcomeCommit,
} from './store.js';

/** A request of one step, without where it writes (the step store adds that). */
type OwnPart<Request> = Omit<Request, keyof StepWrite>;

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
   * One round trip (load-iteration.lua): the run, journal fields, the chat's entries from position `from` on
   * and the chat's length.
   */
  loadIteration(
    from: number,
    fields: readonly string[],
  ): Promise<{
    run: StoredRun | undefined;
    journal: (string | null)[];
    entries: string[];
    chatLength: number;
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
  /** The key of an agent's usage sums on this run's shard (a commit adds the reply's usage there too). */
  agentUsageKey(agent: string): string;
  /** The data the session's agents share (state, tasks, notes): a tool call's `session.data`. */
  readonly sessionData: SessionDataStore;
  /** A question of the session, as stored. */
  readQuestion(questionId: string): Promise<{ record: QuestionRecord; text: string } | undefined>;
  /** Answers a question of the session once (answer-question.lua). */
  answerQuestion(
    answer: Omit<Parameters<typeof answerQuestion>[2], 'sessionId' | 'eventsMaxLength'>,
  ): ReturnType<typeof answerQuestion>;
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
  /** Adds `by` to a counter in the run's journal (model calls started), without a fence: it only counts. */
  countInJournal(field: string, by: number): Promise<number>;
  /** What the run's whole tree has used so far (kept on its root run, for the root's run budget). */
  treeUsage(record: Pick<RunRecord, 'session_id' | 'id' | 'root_run_id'>): Promise<{
    tokens: number;
    costUsd: number;
  }>;
}

export function stepStore(
  redis: Redis,
  space: KeySpace,
  write: StepWrite,
  job: { session_id: string; run_id: string },
): StepStore {
  const runId = job.run_id;
  const sessionId = job.session_id;
  const session = sessionKeys(space, sessionId);
  const { keys } = write;
  const runOf = ([record, rev]: (string | null)[]) =>
    record ? parseRun(record, rev ?? null, `run ${runId}`) : undefined;
  return {
    write,
    loadRun: () => loadRun(redis, keys, runId),
    commit: (request) => commitStep(redis, { ...write, ...request }),
    beginToolCall: (begin) => beginToolCall(redis, { ...write, ...begin }),
    commitToolOutcome: (commit) => commitToolOutcome(redis, { ...write, ...commit }),
    async loadIteration(from, fields) {
      const [runFields, journal, entries, chatLength] = (await runScript(
        redis,
        'load-iteration',
        [keys.run, keys.journal, write.chatKey],
        [from, ...fields],
      )) as unknown as [(string | null)[], (string | null)[], string[], number];
      return { run: runOf(runFields), journal, entries, chatLength };
    },
    async loadWithChat(fields) {
      const [runFields, journal, entries] = (await execPipeline(
        redis
          .pipeline()
          .hmget(keys.run, 'record', 'rev')
          .hmget(keys.journal, ...fields)
          .lrange(write.chatKey, 0, -1),
      )) as [(string | null)[], (string | null)[], string[]];
      return { run: runOf(runFields), journal, entries };
    },
    async loadWithChatEntry(fields, index) {
      const [runFields, journal, entry] = (await execPipeline(
        redis
          .pipeline()
          .hmget(keys.run, 'record', 'rev')
          .hmget(keys.journal, ...fields)
          .lindex(write.chatKey, index),
      )) as [(string | null)[], (string | null)[], string | null];
      return { run: runOf(runFields), journal, entry };
    },
    agentUsageKey: (agent) => agentUsageKey(space, keys.shard, agent),
    sessionData: redisSessionData(redis, space, sessionId),
    readQuestion: (questionId) => readQuestion(redis, space, sessionId, questionId),
    answerQuestion: (answer) =>
      answerQuestion(redis, space, { ...answer, sessionId, eventsMaxLength: write.eventsMaxLength }),
    async askQuestion(record, event) {
      const [code] = await runScript(
        redis,
        'ask-question',
        [write.lockKey, keys.run, session.questions, session.pending, session.events],
        [write.token, record.id, JSON.stringify(record), encodeEvent(event), write.eventsMaxLength],
      );
      return code as 'OK' | 'LOCK_LOST' | 'NO_RUN' | 'RUN_FINISHED';
    },
    async reportProgress(field, valueJson, event) {
      const [code] = await runScript(
        redis,
        'report-progress',
        [write.lockKey, keys.run, keys.journal, keys.events],
        [write.token, field, valueJson, encodeEvent(event), write.eventsMaxLength],
      );
      return code ?? '';
    },
    appendTransientEvent: (event) =>
      redis.xadd(session.events, 'MAXLEN', '~', write.eventsMaxLength, '*', 'event', encodeEvent(event)),
    readChat: (from = 0) => readChat(redis, write.chatKey, from),
    journalFields: (fields) =>
      fields.length === 0 ? Promise.resolve([]) : redis.hmget(keys.journal, ...fields),
    hasJournalField: async (field) => (await redis.hexists(keys.journal, field)) === 1,
    countInJournal: (field, by) => redis.hincrby(keys.journal, field, by),
    async treeUsage(record) {
      const sums = await redis.hmget(
        treeUsageKeyOf(space, record),
        'input_tokens',
        'output_tokens',
        'cost_usd',
      );
      const [input = 0, output = 0, cost = 0] = sums.map((value) => Number(value ?? 0));
      return { tokens: input + output, costUsd: cost };
    },
  };
}
