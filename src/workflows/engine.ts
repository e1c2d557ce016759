import type { Queue, Telemetry } from 'bullmq';
import type { Message, Part } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import type { RatchetEvent } from '../events/event.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/connection.js';
import { ContinuationStore } from '../redis/continuation-store.js';
import { notify } from '../redis/engine-context.js';
import { EngineStore } from '../redis/engine-store.js';
import { type KeySpace, mainChatId } from '../redis/keys.js';
import { redisMemory } from '../redis/memory-store.js';
import {
  type Inbox,
  indexPendingQuestions,
  oldestPendingQuestions,
  readInbox,
} from '../redis/pending-inbox.js';
import {
  readQueueCounts,
  readRunSteps,
  readRunTree,
  type ShardQueue,
  type StepsPage,
} from '../redis/run-inspection.js';
import type { StepJobSettings, StepQueues } from '../redis/step-queues.js';
import { type RegisteredWorker, readWorkers } from '../redis/worker-registry.js';
import { maxRunTimeoutS, secondsLimit } from '../schemas/index.js';
import { type MemoryNote, readMemory } from '../tools/builtin/memory/memory-notes.js';
import type { TaskRecord } from '../tools/builtin/session-data/task-record.js';
import type { Tool } from '../tools/index.js';
import { planRunCreation, runDeadline } from './core/run-creation.js';
import type { RunTimeline, RunTreeNode } from './core/run-timeline.js';
import { shownStatus } from './core/shown-status.js';
import { goalsProgress } from './core/supervisor.js';
import { newRunId, newSessionId, sessionIdOfRun } from './ids.js';
import { normalizeResponse } from './question-answers.js';
import type { QuestionKind, QuestionRecord, QuestionResponse } from './question-record.js';
import type { RunCounts, RunFilter, RunPage, SessionFilter, SessionPage } from './run-listing.js';
import { type Budget, isFinished, type RunRecord, type SubGoal } from './run-record.js';
import { type ForkInput, forkRun, retryRun, type SteerContext, type SteerLimits } from './run-steering.js';
import {
  readSessionNotes,
  readSessionState,
  readSessionTasks,
  type SessionNote,
} from './session-data-view.js';
import type { StepScheduler } from './step-scheduler.js';
import { type Progress, type RunView, type SessionView, type UsageTotals, usageTotalsOf } from './views.js';

export interface EngineOptions {
  /** A connection for commands (not blocking); the engine does not close it. */
  redis: RedisClient;
  space: KeySpace;
  jobs: StepJobSettings;
  eventsMaxLength: number;
  /** Agent names a run may be started with; the first is the default. */
  agents: readonly string[];
  defaultAgent: string;
  logger: Logger;
  now?: () => Date;
  /** The names among `agents` that are teams (their runs are chains of team turns). */
  teams?: readonly string[];
  /** Display prefix of each agent in clients (config `prefix`). */
  prefixes?: Readonly<Record<string, string>>;
  /** The tool an agent would call by that name: lets `respond` check edited arguments of an approval. */
  findTool?: (agent: string, toolName: string) => Tool | undefined;
  /** Event followers served at once (config `api.max_followers`); default 1000. */
  maxFollowers?: number;
  /** The most a session's metadata may hold, as JSON bytes (config `api.max_metadata_bytes`); default 16384. */
  maxMetadataBytes?: number;
  /** Each agent's (and team's) `options.timeout_s`, where it has one: how long its runs may take. */
  timeouts?: Readonly<Record<string, number>>;
  /** Each agent's `options.max_iterations` (a run may ask for fewer, never more). */
  maxIterations?: Readonly<Record<string, number>>;
  /** Each agent's `budget`, where it has one (a run's own budget may not be larger). */
  budgets?: Readonly<Record<string, Budget>>;
  /** BullMQ's queue spans (its telemetry interface, src/telemetry/queue-telemetry.ts), when traces are on: a worker's engine adds its steps' jobs. */
  queueTelemetry?: Telemetry;
}

/** The metadata bound of an engine built without one (config `api.max_metadata_bytes` has the same default). */
const defaultMaxMetadataBytes = 16_384;

/** Pending questions the first oldestPendingQuestions call enters in the index of their ages, at most. */
const questionsIndexedAtFirst = 10_000;

export interface StartRunInput {
  input: string | Part[];
  agent?: string;
  /** Continue this session's chat; a new session is created when omitted. */
  sessionId?: string;
  /** Stored on a new session. */
  metadata?: Record<string, unknown>;
  /** Limits of the run's model usage (the agent's budget applies too). */
  budget?: Budget;
  /** Seconds the run may take, its children included: at most the agent's `options.timeout_s`. */
  timeoutS?: number;
  /** Model calls the run may make: at most the agent's `options.max_iterations`. */
  maxIterations?: number;
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
  private readonly now: () => Date;
  /** Where the engine reads and writes: every Redis command of the client face is made there. */
  private readonly store: EngineStore;
  /**
   * Reads and writes of retries and forks (decision 0022), on a connection of their own (they WATCH), opened
   * on the first retry or fork: most engines (a worker's) never make one.
   */
  private continuations: ContinuationStore | undefined;
  /** The questions pending from before the index of their ages are entered in it (oldestPendingQuestions). */
  private pendingQuestionsIndexed: Promise<void> | undefined;

  constructor(private readonly options: EngineOptions) {
    this.now = options.now ?? (() => new Date());
    this.store = new EngineStore({
      redis: options.redis,
      space: options.space,
      jobs: options.jobs,
      eventsMaxLength: options.eventsMaxLength,
      logger: options.logger,
      maxFollowers: options.maxFollowers ?? 1000,
      now: this.now,
      ...(options.queueTelemetry ? { queueTelemetry: options.queueTelemetry } : {}),
    });
  }

  get space(): KeySpace {
    return this.options.space;
  }

  /** The step queues (tests and benchmarks look into them). */
  get queues(): StepQueues {
    return this.store.queues;
  }

  /** The engine's other face, for the steps a worker runs: add steps, wake them, cancel runs. */
  scheduler(): StepScheduler {
    return this.store.scheduler((runId, reason) => this.cancelRun(runId, reason));
  }

  async startRun(input: StartRunInput): Promise<StartedRun> {
    const sessionId = input.sessionId ?? newSessionId();
    const sessionAgent = input.sessionId === undefined ? undefined : await this.sessionAgent(sessionId);
    if (input.sessionId !== undefined && sessionAgent === undefined) {
      throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
    }
    const agent = input.agent ?? sessionAgent ?? this.options.defaultAgent;
    this.assertAgent(agent);
    this.checkMetadata(input.metadata);
    const deadlineAt = this.deadlineOf(agent, input.timeoutS);
    this.checkRunLimits(agent, input);
    const parts: Part[] =
      typeof input.input === 'string' ? [{ type: 'text', text: input.input }] : input.input;

    for (let tries = 0; tries < 5; tries += 1) {
      // A fresh run id on every try, so a try refused as CONFLICT leaves nothing another try could collide with.
      const runId = newRunId(sessionId);
      const chatLength = await this.store.chatLength(sessionId, mainChatId);
      const plan = planRunCreation({
        sessionId,
        runId,
        agent,
        chatId: mainChatId,
        parts,
        newSession: input.sessionId === undefined ? { metadata: input.metadata ?? {} } : undefined,
        ...(input.budget ? { budget: input.budget } : {}),
        ...(deadlineAt ? { deadlineAt } : {}),
        ...(input.maxIterations === undefined ? {} : { maxIterations: input.maxIterations }),
        prefix: this.options.prefixes?.[agent] ?? '🤖',
        team: this.options.teams?.includes(agent) ?? false,
        chatLength,
        now: this.now().toISOString(),
      });
      const { code, detail } = await this.store.writeRun(plan, chatLength);
      if (code === 'OK') return { runId, sessionId };
      if (code === 'CONFLICT') continue;
      if (code === 'SESSION_BUSY') {
        throw new RatchetError('session_busy', `session ${sessionId} already has an active run: ${detail}`, {
          details: { active_run_id: detail },
        });
      }
      if (code === 'NO_SESSION') throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
      throw new RatchetError('internal', `create-run returned ${code}`);
    }
    throw new RatchetError(
      'internal',
      `could not start a run on session ${sessionId}: its chat kept changing`,
    );
  }

  /**
   * Continues a failed or cancelled run from its last recorded iteration, as a new run of the same session
   * that names it (decision 0022); optionally with new limits, each within the agent's. Returns the new run.
   */
  async retryRun(runId: string, limits: SteerLimits = {}): Promise<StartedRun> {
    const retryId = await retryRun(this.steerContext(), runId, limits);
    return { runId: retryId, sessionId: sessionIdOfRun(retryId) ?? '' };
  }

  /**
   * A new session whose chat is the run's up to iteration `atIteration`'s recorded reply (copied, not asked
   * again), and a run that continues it, with a new message or another agent (decision 0022).
   */
  async forkRun(runId: string, input: ForkInput): Promise<StartedRun> {
    this.checkMetadata(input.metadata);
    return forkRun(this.steerContext(), runId, input);
  }

  private steerContext(): SteerContext {
    this.continuations ??= new ContinuationStore({
      redis: this.options.redis,
      space: this.options.space,
      queues: this.store.queues,
      eventsMaxLength: this.options.eventsMaxLength,
    });
    return {
      store: this.continuations,
      space: this.options.space,
      now: this.now,
      limitsOf: (agent, limits) => {
        this.assertAgent(agent);
        const deadlineAt = this.deadlineOf(agent, limits.timeoutS);
        this.checkRunLimits(agent, limits);
        return {
          ...(limits.budget ? { budget: limits.budget } : {}),
          ...(deadlineAt ? { deadlineAt } : {}),
          ...(limits.maxIterations === undefined ? {} : { maxIterations: limits.maxIterations }),
        };
      },
      isTeam: (agent) => this.options.teams?.includes(agent) ?? false,
      prefixOf: (agent) => this.options.prefixes?.[agent] ?? '🤖',
    };
  }

  async getRun(runId: string): Promise<RunView | undefined> {
    const sessionId = sessionIdOfRun(runId);
    if (!sessionId) return undefined;
    const [stored, progress] = await Promise.all([
      this.store.loadRun(sessionId, runId),
      this.store.runProgress(sessionId, runId),
    ]);
    if (!stored) return undefined;
    const record = stored.record;
    const pending =
      record.status === 'running' || record.status === 'queued'
        ? await this.questionsOfTree(sessionId, record)
        : [];
    return {
      ...record,
      status: shownStatus(record.status, pending.length),
      pending_question: pending[0] ?? null,
      progress: record.sub_goals
        ? supervisorProgress(record.sub_goals, record.updated_at)
        : progress
          ? (JSON.parse(progress) as Progress)
          : null,
    };
  }

  /**
   * The pending questions a run waits for: its own, and for a root run those of the runs below it (a
   * delegated agent or a team member asking the user holds up the whole tree).
   */
  private async questionsOfTree(sessionId: string, run: RunRecord): Promise<QuestionRecord[]> {
    const pending = await this.store.pendingQuestions(sessionId);
    const roots = await Promise.all(
      pending.map(async (question) => {
        if (question.run_id === run.id || run.parent !== null) return question.run_id;
        const asker = await this.store.loadRun(sessionId, question.run_id);
        return asker?.record.root_run_id ?? question.run_id;
      }),
    );
    return pending.filter((_question, index) => roots[index] === run.id);
  }

  /** Resolves when the run is finished, or with its current state when the timeout passes. */
  async waitForRun(
    runId: string,
    options: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
  ): Promise<RunView> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    const pollMs = options.pollMs ?? 50;
    for (;;) {
      const run = await this.getRun(runId);
      if (!run) throw new RatchetError('run_not_found', `unknown run ${runId}`);
      const finished = run.status !== 'waiting_input' && isFinished(run.status);
      // A waiter that went away (a long-poll client disconnected) stops polling.
      if (finished || Date.now() >= deadline || options.signal?.aborted) return run;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /**
   * Calls `listener` with the record of each run a cancellation through this engine finishes (its children
   * too), once per run however often cancel is called; returns a function that removes it.
   */
  onRunCancelled(listener: (record: RunRecord) => void): () => void {
    const listeners = this.store.context.runCancelled;
    listeners?.add(listener);
    return () => listeners?.delete(listener);
  }

  /** Calls `listener` with each question this engine closes (answered, or cancelled with its run), once. */
  onQuestionClosed(listener: (question: QuestionRecord, at: string) => void): () => void {
    const listeners = this.store.context.questionClosed;
    listeners?.add(listener);
    return () => listeners?.delete(listener);
  }

  async cancelRun(runId: string, reason = 'cancelled by request'): Promise<RunView> {
    await this.store.cancelRun(runId, reason);
    const run = await this.getRun(runId);
    if (!run) throw new RatchetError('run_not_found', `unknown run ${runId}`);
    return run;
  }

  async createSession(
    input: { agent?: string; metadata?: Record<string, unknown> } = {},
  ): Promise<SessionView> {
    const agent = input.agent ?? this.options.defaultAgent;
    this.assertAgent(agent);
    this.checkMetadata(input.metadata);
    return this.store.createSession({ agent, ...(input.metadata ? { metadata: input.metadata } : {}) });
  }

  /**
   * A session's metadata is kept as long as the session (the retention window), so what one client may store
   * is bounded: `api.max_metadata_bytes` of JSON, checked before anything is written. Given with an existing
   * session (where it is ignored), it is checked all the same: one rule whatever the request.
   */
  private checkMetadata(metadata: Record<string, unknown> | undefined): void {
    if (metadata === undefined) return;
    const limit = this.options.maxMetadataBytes ?? defaultMaxMetadataBytes;
    const bytes = Buffer.byteLength(JSON.stringify(metadata));
    if (bytes <= limit) return;
    throw new RatchetError(
      'invalid_run_settings',
      `metadata: ${bytes} bytes as JSON, more than api.max_metadata_bytes (${limit}) allows; store less, ` +
        'or raise api.max_metadata_bytes',
      { details: { field: 'metadata', limit } },
    );
  }

  /** An agent's usage summed over all its runs (every shard). */
  async agentUsage(agent: string): Promise<UsageTotals> {
    const totals = (await this.store.agentUsageByShard(agent)).map(usageTotalsOf);
    return {
      input_tokens: totals.reduce((sum, usage) => sum + usage.input_tokens, 0),
      output_tokens: totals.reduce((sum, usage) => sum + usage.output_tokens, 0),
      cached_input_tokens: totals.reduce((sum, usage) => sum + usage.cached_input_tokens, 0),
      requests: totals.reduce((sum, usage) => sum + usage.requests, 0),
      cost_usd: totals.reduce((sum, usage) => sum + usage.cost_usd, 0),
    };
  }

  /** Runs newest first, filtered, from the run index: a page and where the next one starts. */
  listRuns(filter: RunFilter): Promise<RunPage> {
    return this.store.listRuns(filter);
  }

  /** How many runs are listed with each status (created since `sinceMs` when given). */
  countRuns(sinceMs?: number): Promise<RunCounts> {
    return this.store.countRuns(sinceMs);
  }

  /** Sessions by last activity, newest first: a page and where the next one starts. */
  listSessions(filter: SessionFilter): Promise<SessionPage> {
    return this.store.listSessions(filter);
  }

  async getSession(sessionId: string): Promise<SessionView | undefined> {
    return this.store.getSession(sessionId);
  }

  /** The state blackboard of a session (key -> value); undefined when there is no such session. */
  async sessionState(sessionId: string): Promise<Record<string, unknown> | undefined> {
    return (await this.getSession(sessionId)) && readSessionState(this.store.sessionData(sessionId));
  }

  /** The task board of a session; undefined when there is no such session. */
  async sessionTasks(sessionId: string): Promise<TaskRecord[] | undefined> {
    return (await this.getSession(sessionId)) && readSessionTasks(this.store.sessionData(sessionId));
  }

  /** The notes of a session (shared ones and each agent's); undefined when there is no such session. */
  async sessionNotes(sessionId: string): Promise<SessionNote[] | undefined> {
    return (await this.getSession(sessionId)) && readSessionNotes(this.store.sessionData(sessionId));
  }

  /**
   * What an agent remembers across sessions (the `memory` toolbox): its own notes, then the deployment's,
   * without those past their expiry.
   */
  async agentMemory(agent: string): Promise<MemoryNote[]> {
    return readMemory(redisMemory(this.options.redis, this.options.space), agent, this.now());
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return this.store.deleteSession(sessionId);
  }

  /** The pending questions of a session. */
  async listQuestions(sessionId: string): Promise<QuestionRecord[]> {
    if (!(await this.getSession(sessionId)))
      throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
    return this.store.pendingQuestions(sessionId);
  }

  /** Answers a pending question, once, and wakes the step that waits for it. */
  async respond(sessionId: string, questionId: string, response: QuestionResponse): Promise<void> {
    if (!(await this.getSession(sessionId)))
      throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
    const current = await this.store.readQuestion(sessionId, questionId);
    if (!current)
      throw new RatchetError('question_not_found', `unknown question ${questionId} in session ${sessionId}`);
    const { record } = current;
    const tool = record.tool ? this.options.findTool?.(record.agent, record.tool.name) : undefined;
    const answer = normalizeResponse(record, response, tool);
    const now = this.now().toISOString();
    const result = await this.store.answerQuestion({ sessionId, questionId, response: answer, now });
    if (result === 'not_found')
      throw new RatchetError('question_not_found', `unknown question ${questionId}`);
    if (result !== 'answered') {
      throw new RatchetError(
        'question_closed',
        `question ${questionId} is no longer open (${result === 'closed' ? 'answered' : 'its run is finished'})`,
      );
    }
    notify(this.store.context, this.store.context.questionClosed, (listener) => listener(record, now));
    await this.store.wakeStep(sessionId, record.job_id);
  }

  /**
   * Every event after `after`, then each new one, until the signal aborts. Throws `too_many_followers` at
   * once (not on the first read) when this process serves `maxFollowers` already.
   */
  followEvents(
    sessionId: string,
    options: { after?: string; signal: AbortSignal },
  ): AsyncGenerator<RatchetEvent> {
    return this.store.followEvents(sessionId, options);
  }

  async readChat(sessionId: string, options: { chatId?: string; from?: number } = {}): Promise<Message[]> {
    return this.store.readChat(sessionId, options.chatId ?? mainChatId, options.from ?? 0);
  }

  /** Events after the given stream id (exclusive), oldest first. */
  async readEvents(
    sessionId: string,
    options: { after?: string; count?: number } = {},
  ): Promise<RatchetEvent[]> {
    return this.store.readEvents(sessionId, options);
  }

  /** The id of the session's newest event (undefined when it has none): follow from it to get only new ones. */
  lastEventId(sessionId: string): Promise<string | undefined> {
    return this.store.lastEventId(sessionId);
  }

  /** When a new run of the agent must be finished: its own timeout, or a shorter one asked for the run. */
  private deadlineOf(agent: string, timeoutS: number | undefined): string | undefined {
    const limit = this.options.timeouts?.[agent];
    // The API and the config refuse it first; a caller of the engine itself must not store a date past
    // what the run record's schema takes either.
    if (
      timeoutS !== undefined &&
      !(Number.isInteger(timeoutS) && timeoutS > 0 && timeoutS <= maxRunTimeoutS)
    ) {
      throw new RatchetError(
        'invalid_run_settings',
        `timeout_s: ${timeoutS} must be a whole number of seconds from 1 to ${secondsLimit(maxRunTimeoutS)}`,
        { details: { field: 'timeout_s', limit: maxRunTimeoutS } },
      );
    }
    if (timeoutS !== undefined && limit !== undefined && timeoutS > limit) {
      throw new RatchetError(
        'invalid_run_settings',
        `timeout_s: ${timeoutS} is more than agent "${agent}" allows (options.timeout_s: ${limit}); ask for ${limit} or less`,
        { details: { field: 'timeout_s', limit } },
      );
    }
    return runDeadline(this.now(), timeoutS ?? limit);
  }

  /** A run may ask for less than its agent's config allows, never more. */
  private checkRunLimits(agent: string, input: Pick<StartRunInput, 'maxIterations' | 'budget'>): void {
    // `field` and `limit` let a client (the API's `details.issues`) point at what to change.
    const refuse = (field: string, limit: number | null, message: string) => {
      throw new RatchetError('invalid_run_settings', message, { details: { field, limit } });
    };
    if (input.maxIterations !== undefined) {
      const limit = this.options.maxIterations?.[agent];
      if (limit === undefined)
        refuse(
          'max_iterations',
          null,
          `max_iterations: "${agent}" is a team or handoff group; only an agent's runs take max_iterations`,
        );
      else if (input.maxIterations > limit)
        refuse(
          'max_iterations',
          limit,
          `max_iterations: ${input.maxIterations} is more than agent "${agent}" allows (options.max_iterations: ${limit}); ask for ${limit} or less`,
        );
    }
    const agentBudget = this.options.budgets?.[agent];
    if (input.budget && agentBudget) {
      for (const field of ['tokens', 'cost_usd'] as const) {
        const asked = input.budget[field];
        const allowed = agentBudget[field];
        if (asked !== undefined && allowed !== undefined && asked > allowed)
          refuse(
            `budget.${field}`,
            allowed,
            `budget.${field}: ${asked} is more than agent "${agent}" allows (budget.${field}: ${allowed}); ask for ${allowed} or less`,
          );
      }
    }
  }

  private assertAgent(agent: string): void {
    if (!this.options.agents.includes(agent)) {
      throw new RatchetError(
        'agent_not_found',
        `unknown agent "${agent}" (known: ${this.options.agents.join(', ')})`,
      );
    }
  }

  private async sessionAgent(sessionId: string): Promise<string | undefined> {
    return (await this.store.sessionRecord(sessionId))?.agent;
  }

  /** The run and every run below it (GET /v1/runs/:id/tree); undefined when the run does not exist. */
  async runTree(runId: string): Promise<{ runs: RunTreeNode[]; truncated: boolean } | undefined> {
    const sessionId = sessionIdOfRun(runId);
    if (!sessionId) return undefined;
    const pending = await this.store.pendingQuestions(sessionId);
    const byRun = new Map<string, number>();
    for (const question of pending) byRun.set(question.run_id, (byRun.get(question.run_id) ?? 0) + 1);
    return readRunTree(this.options.redis, this.options.space, sessionId, runId, {
      pendingOf: (id) => byRun.get(id) ?? 0,
      nowMs: this.now().getTime(),
    });
  }

  /** A page of the run's timeline from its journal (GET /v1/runs/:id/steps); undefined when it does not exist. */
  async runSteps(runId: string, page: StepsPage): Promise<RunTimeline | undefined> {
    const sessionId = sessionIdOfRun(runId);
    if (!sessionId) return undefined;
    return readRunSteps(this.options.redis, this.options.space, sessionId, runId, page);
  }

  /**
   * Every pending question and approval across sessions, newest first, at most `limit` (GET /v1/questions):
   * the sessions of the runs the index lists as waiting for input. A question record that does not parse is
   * left out and logged, so one bad record does not hide the others.
   */
  inbox(limit: number): Promise<Inbox> {
    return readInbox(this.options.redis, this.options.space, limit, (questionId, problem) =>
      this.options.logger.warn(
        { question_id: questionId, problem },
        'question record does not parse; left out of the inbox',
      ),
    );
  }

  /**
   * When the oldest pending question of each kind was asked (ms since the epoch; a kind with none is absent),
   * for GET /metrics: read from the run index, never from the question records. The engine's first call
   * also enters the questions pending since before that index existed (one inbox read).
   */
  async oldestPendingQuestions(): Promise<Partial<Record<QuestionKind, number>>> {
    const { redis, space } = this.options;
    this.pendingQuestionsIndexed ??= this.inbox(questionsIndexedAtFirst)
      .then((inbox) => indexPendingQuestions(redis, space, inbox.questions))
      .catch((error: unknown) => {
        // Tried again by the next call (Redis may have been away).
        this.pendingQuestionsIndexed = undefined;
        throw error;
      });
    await this.pendingQuestionsIndexed;
    return oldestPendingQuestions(redis, space);
  }

  /**
   * The chat a run works on, from index `from` (GET /v1/runs/:id/messages): a child run's or team member's
   * own chat, a root run's session chat. Undefined when the run does not exist.
   */
  async runChat(runId: string, from = 0): Promise<{ chatId: string; messages: Message[] } | undefined> {
    const sessionId = sessionIdOfRun(runId);
    if (!sessionId) return undefined;
    const stored = await this.store.loadRun(sessionId, runId);
    if (!stored) return undefined;
    const chatId = stored.record.chat_id;
    return { chatId, messages: await this.store.readChat(sessionId, chatId, from) };
  }

  /** The step queue of every shard, in shard order (bull-board at /admin/queues shows them). */
  stepQueues(): readonly Queue[] {
    return this.store.queues.queues;
  }

  /** Live workers, the step queues per shard, runs by status (GET /v1/system). */
  async systemState(): Promise<SystemState> {
    const { redis, space } = this.options;
    const [workers, queues, runs] = await Promise.all([
      readWorkers(redis, space),
      readQueueCounts(redis, space, this.store.queues.queues),
      this.store.countRuns(),
    ]);
    return { workers, queues, runs_by_status: runs };
  }

  async close(): Promise<void> {
    try {
      await this.continuations?.close();
    } finally {
      await this.store.close();
    }
  }
}

export interface SystemState {
  workers: RegisteredWorker[];
  queues: ShardQueue[];
  /** Runs by status, from the run index (waiting_input: with a pending question). */
  runs_by_status: RunCounts;
}

/** A supervisor's progress is its sub-goals'. */
function supervisorProgress(goals: SubGoal[], at: string): Progress {
  const { fraction, message } = goalsProgress(goals);
  return { fraction, message, at, sub_goals: goals };
}
