import type { Queue } from 'bullmq';
import type { Message } from '../chat/index.js';
import type { RatchetEvent } from '../events/event.js';
import type { KeySpace } from '../redis/keys.js';
import type { Inbox } from '../redis/pending-inbox.js';
import type { StepsPage } from '../redis/run-inspection.js';
import { deleteSession, getSession } from '../redis/session-store.js';
import type { StepQueues } from '../redis/step-queues.js';
import type { MemoryNote } from '../tools/builtin/memory/memory-notes.js';
import type { TaskRecord } from '../tools/builtin/session-data/task-record.js';
import type {
  QuestionKind,
  QuestionRecord,
  QuestionResponse,
  RememberedApproval,
  RunAdmission,
  RunCounts,
  RunFilter,
  RunPage,
  RunRecord,
  RunTimeline,
  RunTreeNode,
  RunView,
  SessionFilter,
  SessionPage,
  SessionView,
  StepScheduler,
  UsageTotals,
} from '../workflows/index.js';
import { sweepAdmission, withQueuedReasons } from './admission.js';
import type { EngineOptions, StartedRun, StartRunInput } from './engine-options.js';
import { EngineParts } from './engine-parts.js';
import {
  type PublishedEventResult,
  type SentEvent,
  type SignalResult,
  sendEvent,
  sendSignal,
} from './external-events.js';
import {
  type AgentDefinitions,
  agentDefinitions,
  agentUsage,
  runSteps,
  runTree,
  type SystemState,
  systemState,
} from './inspection.js';
import {
  inbox,
  listApprovals,
  listQuestions,
  oldestPendingQuestions,
  respond,
  revokeApproval,
} from './questions.js';
import type { ForkInput, SteerLimits } from './run-steering.js';
import { cancelRun, fork, getRun, requestUpgrade, retry, startRun, waitForRun } from './runs.js';
import { Schedules } from './schedules.js';
import type { SessionNote } from './session-data-view.js';
import {
  cancelQueuedMessage,
  type SendMessageInput,
  type SentMessage,
  sendMessage,
  startQueuedRuns,
} from './session-messages.js';
import {
  agentMemory,
  createSession,
  followEvents,
  readChat,
  runChat,
  sessionNotes,
  sessionState,
  sessionTasks,
} from './sessions.js';
import {
  listWebhookDeliveries,
  redeliverWebhook,
  type WebhookDelivery,
  type WebhookDeliveryPage,
} from './webhooks.js';

/**
 * The programmatic face of the durable engine: start runs, read them, wait for them, read chats and events.
 * It records and enqueues; it never runs a model or a tool (workers do). Each concern has its own module
 * (runs.ts, sessions.ts, inspection.ts, questions.ts) over the parts the engine composes (engine-parts.ts).
 */
export class Engine {
  private readonly parts: EngineParts;
  private scheduleConcern: Schedules | undefined;

  constructor(options: EngineOptions) {
    this.parts = new EngineParts(options);
  }

  get space(): KeySpace {
    return this.parts.space;
  }

  /** The step queues (tests and benchmarks look into them). */
  get queues(): StepQueues {
    return this.parts.queues;
  }

  /** Fair admission of root runs (decision 0038); undefined when the config limits nothing. */
  get admission(): RunAdmission | undefined {
    return this.parts.admission;
  }

  /**
   * Frees the admission slots of runs that ended, or are gone, without freeing them (a process died between
   * the run's end and its release), on one process at a time; returns how many it freed (decision 0038).
   */
  sweepAdmission(): Promise<number> {
    return sweepAdmission(this.parts);
  }

  /**
   * Frees at once the admission slots that runs removed by retention still hold (decision 0048); returns how
   * many it freed (0 without fair admission).
   */
  async releaseRemovedRuns(runIds: readonly string[]): Promise<number> {
    return (await this.parts.admission?.releaseRemoved(runIds)) ?? 0;
  }

  /** The engine's other face, for the steps a worker runs: add steps, wake them, cancel runs. */
  scheduler(): StepScheduler {
    return this.parts.scheduler((runId, reason) => this.cancelRun(runId, reason));
  }

  // Runs (runs.ts).

  startRun(input: StartRunInput): Promise<StartedRun> {
    return startRun(this.parts, input);
  }

  /**
   * Continues a failed or cancelled run from its last recorded iteration, as a new run of the same session
   * that names it (decision 0022); optionally with new limits, each within the agent's. Returns the new run.
   */
  retryRun(runId: string, limits: SteerLimits = {}): Promise<StartedRun> {
    return retry(this.parts, runId, limits);
  }

  /**
   * A new session whose chat is the run's up to iteration `atIteration`'s recorded reply (copied, not asked
   * again), and a run that continues it, with a new message or another agent (decision 0022).
   */
  forkRun(runId: string, input: ForkInput): Promise<StartedRun> {
    return fork(this.parts, runId, input);
  }

  /**
   * Moves a run to its workers' current definition of its agent at its next iteration, recorded with an
   * agent_upgraded event (decision 0030). Returns the run as it is now.
   */
  upgradeRun(runId: string): Promise<RunView> {
    return requestUpgrade(this.parts, runId);
  }

  getRun(runId: string): Promise<RunView | undefined> {
    return getRun(this.parts, runId);
  }

  /** Resolves when the run is finished, or with its current state when the timeout passes. */
  waitForRun(
    runId: string,
    options: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
  ): Promise<RunView> {
    return waitForRun(this.parts, runId, options);
  }

  /**
   * Sends a message to a session: it starts a run, or, when the session's run is active, does what `onBusy`
   * (or the session agent's `options.on_busy`) says: reject, queue, steer or interrupt (decision 0032).
   */
  sendMessage(input: SendMessageInput): Promise<SentMessage> {
    return sendMessage(this.parts, input);
  }

  /** Takes a queued message out of its session's queue (throws queued_message_not_found when it is not there). */
  cancelQueuedMessage(sessionId: string, messageId: string): Promise<void> {
    return cancelQueuedMessage(this.parts, sessionId, messageId);
  }

  /**
   * Starts the next run of the shard's sessions whose active run ended with messages queued (a worker's
   * sweep does it); returns how many it started.
   */
  startQueuedRuns(shard: number): Promise<number> {
    return startQueuedRuns(this.parts, shard);
  }

  cancelRun(runId: string, reason = 'cancelled by request'): Promise<RunView> {
    return cancelRun(this.parts, runId, reason);
  }

  /**
   * Calls `listener` with the record of each run a cancellation through this engine finishes (its children
   * too), once per run however often cancel is called; returns a function that removes it.
   */
  onRunCancelled(listener: (record: RunRecord) => void): () => void {
    this.parts.runCancelled.add(listener);
    return () => this.parts.runCancelled.delete(listener);
  }

  /** Calls `listener` with each question this engine closes (answered, or cancelled with its run), once. */
  onQuestionClosed(listener: (question: QuestionRecord, at: string) => void): () => void {
    this.parts.questionClosed.add(listener);
    return () => this.parts.questionClosed.delete(listener);
  }

  // Sessions and their data (sessions.ts).

  createSession(
    input: { agent?: string; metadata?: Record<string, unknown>; tenant?: string } = {},
  ): Promise<SessionView> {
    return createSession(this.parts, input);
  }

  getSession(sessionId: string): Promise<SessionView | undefined> {
    return getSession(this.parts.context, sessionId);
  }

  /** Cancels the session's active run, then deletes everything of the session; false when there is none. */
  deleteSession(sessionId: string): Promise<boolean> {
    return deleteSession(this.parts.context, sessionId);
  }

  /** Sessions by last activity, newest first: a page and where the next one starts. */
  listSessions(filter: SessionFilter): Promise<SessionPage> {
    return this.parts.store.listSessions(filter);
  }

  /** The state blackboard of a session (key -> value); undefined when there is no such session. */
  sessionState(sessionId: string): Promise<Record<string, unknown> | undefined> {
    return sessionState(this.parts, sessionId);
  }

  /** The task board of a session; undefined when there is no such session. */
  sessionTasks(sessionId: string): Promise<TaskRecord[] | undefined> {
    return sessionTasks(this.parts, sessionId);
  }

  /** The notes of a session (shared ones and each agent's); undefined when there is no such session. */
  sessionNotes(sessionId: string): Promise<SessionNote[] | undefined> {
    return sessionNotes(this.parts, sessionId);
  }

  /**
   * What an agent remembers across sessions (the `memory` toolbox): its own notes, then the deployment's,
   * without those past their expiry.
   */
  agentMemory(agent: string): Promise<MemoryNote[]> {
    return agentMemory(this.parts, agent);
  }

  readChat(sessionId: string, options: { chatId?: string; from?: number } = {}): Promise<Message[]> {
    return readChat(this.parts, sessionId, options);
  }

  /**
   * The chat a run works on, from index `from` (GET /v1/runs/:id/messages): a child run's or team member's
   * own chat, a root run's session chat. Undefined when the run does not exist.
   */
  runChat(runId: string, from = 0): Promise<{ chatId: string; messages: Message[] } | undefined> {
    return runChat(this.parts, runId, from);
  }

  /**
   * Every event after `after`, then each new one, until the signal aborts. Throws `too_many_followers` at
   * once (not on the first read) when this process serves `maxFollowers` already.
   */
  followEvents(
    sessionId: string,
    options: { after?: string; signal: AbortSignal },
  ): AsyncGenerator<RatchetEvent> {
    return followEvents(this.parts, sessionId, options);
  }

  /** Events after the given stream id (exclusive), oldest first. */
  readEvents(sessionId: string, options: { after?: string; count?: number } = {}): Promise<RatchetEvent[]> {
    return this.parts.store.readEvents(sessionId, options);
  }

  /** The id of the session's newest event (undefined when it has none): follow from it to get only new ones. */
  lastEventId(sessionId: string): Promise<string | undefined> {
    return this.parts.store.lastEventId(sessionId);
  }

  // Inspection (inspection.ts).

  /** Runs newest first, filtered, from the run index: a page and where the next one starts. */
  async listRuns(filter: RunFilter): Promise<RunPage> {
    return withQueuedReasons(this.parts, await this.parts.store.listRuns(filter));
  }

  /** How many runs are listed with each status (created since `sinceMs` when given). */
  countRuns(sinceMs?: number): Promise<RunCounts> {
    return this.parts.store.countRuns(sinceMs);
  }

  /** An agent's usage summed over all its runs (every shard). */
  agentUsage(agent: string): Promise<UsageTotals> {
    return agentUsage(this.parts, agent);
  }

  /** An agent's current definition and those its unfinished runs work under, with counts (decision 0030). */
  agentDefinitions(agent: string): Promise<AgentDefinitions> {
    return agentDefinitions(this.parts, agent);
  }

  /** The run and every run below it (GET /v1/runs/:id/tree); undefined when the run does not exist. */
  runTree(runId: string): Promise<{ runs: RunTreeNode[]; truncated: boolean } | undefined> {
    return runTree(this.parts, runId);
  }

  /** A page of the run's timeline from its journal (GET /v1/runs/:id/steps); undefined when it does not exist. */
  runSteps(runId: string, page: StepsPage): Promise<RunTimeline | undefined> {
    return runSteps(this.parts, runId, page);
  }

  /** The step queue of every shard, in shard order (bull-board at /admin/queues shows them). */
  stepQueues(): readonly Queue[] {
    return this.parts.queues.queues;
  }

  /** Live workers, the step queues per shard, runs by status (GET /v1/system). */
  systemState(): Promise<SystemState> {
    return systemState(this.parts);
  }

  // Questions (questions.ts).

  /** The pending questions of a session. */
  listQuestions(sessionId: string): Promise<QuestionRecord[]> {
    return listQuestions(this.parts, sessionId);
  }

  /** Answers a pending question, once, and wakes the step that waits for it. */
  respond(sessionId: string, questionId: string, response: QuestionResponse): Promise<void> {
    return respond(this.parts, sessionId, questionId, response);
  }

  /** The session's remembered approvals, oldest first (decision 0046). */
  listApprovals(sessionId: string): Promise<RememberedApproval[]> {
    return listApprovals(this.parts, sessionId);
  }

  /** Revokes one remembered approval of the session (404 when it has none by that key). */
  revokeApproval(sessionId: string, key: string): Promise<void> {
    return revokeApproval(this.parts, sessionId, key);
  }

  /**
   * Every pending question and approval across sessions, newest first, at most `limit` (GET /v1/questions).
   * A question record that does not parse is left out and logged.
   */
  inbox(limit: number): Promise<Inbox> {
    return inbox(this.parts, limit);
  }

  /**
   * When the oldest pending question of each kind was asked (ms since the epoch; a kind with none is absent),
   * for GET /metrics, from the run index.
   */
  oldestPendingQuestions(): Promise<Partial<Record<QuestionKind, number>>> {
    return oldestPendingQuestions(this.parts);
  }

  // Webhooks (webhooks.ts, decision 0034).

  /** The webhook deliveries, newest first, `limit` after the place `before` if given. */
  listWebhookDeliveries(options: { limit: number; before?: string }): Promise<WebhookDeliveryPage> {
    return listWebhookDeliveries(this.parts, options);
  }

  /** Sends a delivery again now, with its webhook-id ('delivering' while an attempt is under way). */
  redeliverWebhook(id: string): Promise<WebhookDelivery | 'delivering' | undefined> {
    return redeliverWebhook(this.parts, id);
  }

  /** Schedules (decision 0036): created, read, paused, resumed, deleted, and their fires taken up. */
  schedules(): Schedules {
    this.scheduleConcern ??= new Schedules(this.parts);
    return this.scheduleConcern;
  }

  /**
   * Sends an event to the deployment (POST /v1/events, decision 0033): kept for the retention window for the
   * waits of its name, which are woken; each trigger of its name starts its run once per event id.
   */
  sendEvent(sent: SentEvent): Promise<PublishedEventResult> {
    return sendEvent(this.parts, sent);
  }

  /** Sends a signal to one run (POST /v1/runs/:id/signal): its waits for that event name receive it, once. */
  signalRun(runId: string, sent: SentEvent): Promise<SignalResult> {
    return sendSignal(this.parts, runId, sent);
  }

  async close(): Promise<void> {
    try {
      await this.scheduleConcern?.close();
    } finally {
      await this.parts.close();
    }
  }
}
