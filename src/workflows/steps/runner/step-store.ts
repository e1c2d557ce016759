import type { ContextView, Message } from '../../../chat/index.js';
import type { StoredEvent } from '../../../events/event.js';
import type { SessionAccess, ToolContext } from '../../../tools/index.js';
import type { AttemptStart } from '../../journal.js';
import type { PendingMessage } from '../../pending-message.js';
import type { AnswerResult, QuestionRecord, QuestionResponse } from '../../question-record.js';
import type { RememberedApproval } from '../../remembered-approval-record.js';
import type { RunRecord, StoredRun } from '../../run-record.js';
import type {
  BeginToolCall,
  BeginToolCallResult,
  CommitRequest,
  CommitResult,
  SteerCommit,
  ToolOutcomeCommit,
} from './step-commit.js';

/** A question answered by the step that asked it (its default answer, once its timeout passed). */
export interface StepAnswer {
  questionId: string;
  response: QuestionResponse | ((question: QuestionRecord) => QuestionResponse);
  by: 'user' | 'timeout';
  now: string;
}

/**
 * The reads and commits one execution of a step makes on its own run, opened once per execution from the job
 * (its run, its chat, its job's lock and token, which the steps never see). Every commit is fenced by that
 * token. Steps name what they read and write (journal fields, agents, runs, chats by id); the store (in
 * src/redis) decides where it is kept.
 */
export interface StepStore {
  loadRun(): Promise<StoredRun | undefined>;
  commit<JournalValue>(request: CommitRequest<JournalValue>): Promise<CommitResult>;
  beginToolCall(begin: BeginToolCall): Promise<BeginToolCallResult>;
  commitToolOutcome(commit: ToolOutcomeCommit): Promise<CommitResult>;
  /** Appends messages steered into the run and takes them off its list, fenced (commit-steers.lua). */
  commitSteers(commit: SteerCommit): Promise<CommitResult>;
  /**
   * One round trip (load-iteration.lua): the run, journal fields, the whole chat (read from where this
   * process's copy of it ends; none when the run does not exist), its context view, and the messages
   * steered into the run that wait for its next iteration. With `countField` (the iteration's model call
   * counter, decision 0054), it counts the call this execution is about to make when the run exists and
   * `fields[0]` (the iteration's reply) is not recorded: `counted` says whether it did; `journal` holds the
   * values from before the count.
   */
  loadIteration(
    fields: readonly string[],
    countField?: string,
  ): Promise<{
    run: StoredRun | undefined;
    journal: (string | null)[];
    counted: boolean;
    chat: Message[];
    view: ContextView;
    steered: PendingMessage[];
  }>;
  /** One round trip: the run, journal fields, and the whole chat. */
  loadWithChat(
    fields: readonly string[],
  ): Promise<{ run: StoredRun | undefined; journal: (string | null)[]; chat: Message[] }>;
  /** One round trip: the run, journal fields, and one chat entry (the reply that made a tool call). */
  loadWithChatEntry(
    fields: readonly string[],
    index: number,
  ): Promise<{ run: StoredRun | undefined; journal: (string | null)[]; entry: Message | undefined }>;
  /** Runs of this run's session by id, in the order asked (undefined where a run does not exist). */
  loadRuns(runIds: readonly string[]): Promise<(StoredRun | undefined)[]>;
  /** The length of a chat of this run's session. */
  chatLength(chatId: string): Promise<number>;
  /** The data the session's agents share (state, tasks, notes): a tool call's `session.data`. */
  readonly sessionData: SessionAccess['data'];
  /** Memory that outlives sessions (the `memory` toolbox): a tool call's `memory`. */
  readonly memory: ToolContext['memory'];
  /** A question of the session, as stored. */
  readQuestion(questionId: string): Promise<{ record: QuestionRecord; text: string } | undefined>;
  /** Answers a question of the session once (answer-question.lua). */
  answerQuestion(answer: StepAnswer): Promise<{ result: AnswerResult; question?: QuestionRecord }>;
  /** Closes the pending questions of this (finished) run. */
  closeQuestionsOfRun(): Promise<void>;
  /** Records the step's question and its ask_user event, fenced (ask-question.lua). */
  askQuestion(
    record: QuestionRecord,
    event: StoredEvent,
  ): Promise<'OK' | 'LOCK_LOST' | 'NO_RUN' | 'RUN_FINISHED'>;
  /** The session's remembered approvals (decision 0046), oldest first. */
  rememberedApprovals(): Promise<RememberedApproval[]>;
  /**
   * Records the step's approval question as answered by a remembered approval, with its event, fenced and
   * once (remembered-approval.lua); REVOKED when the approval is gone.
   */
  approveByRemembered(
    record: QuestionRecord,
    event: StoredEvent,
    approval: string,
  ): Promise<'OK' | 'EXISTS' | 'REVOKED' | 'LOCK_LOST' | 'NO_RUN' | 'RUN_FINISHED'>;
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

/** Opens the store of one execution of a step job: where it writes is decided once, from the job. */
export interface StepStores {
  /** `attempt`: this execution, noted in the step's attempts record by the first script it runs. */
  open(
    job: { session_id: string; run_id: string; chat_id: string },
    jobId: string,
    token: string,
    attempt?: AttemptStart,
  ): StepStore;
}
