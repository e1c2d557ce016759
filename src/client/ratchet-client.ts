import type { z } from 'zod';
import type * as Wire from '../wire/index.js';
import {
  acceptedRunSchema,
  agentDetailSchema,
  agentListSchema,
  agentMemorySchema,
  healthSchema,
  inboxSchema,
  messageListSchema,
  questionListSchema,
  rememberedApprovalListSchema,
  respondAcceptedSchema,
  runListSchema,
  runMessageListSchema,
  runSchema,
  runStepsSchema,
  runSummarySchema,
  runTreeSchema,
  scheduleListSchema,
  scheduleViewSchema,
  sentEventSchema,
  sentMessageSchema,
  sentSignalSchema,
  sessionListSchema,
  sessionNoteListSchema,
  sessionSchema,
  sessionStateSchema,
  sessionTaskListSchema,
  systemStateSchema,
  webhookDeliveryListSchema,
  webhookDeliverySchema,
} from '../wire/index.js';
import { apiErrorOf, RatchetResponseError } from './client-errors.js';
import { type EventsOptions, followEvents } from './event-stream.js';
import { parseLenient } from './lenient-parse.js';
import { queryString } from './query-string.js';

export interface RatchetClientOptions {
  /** Where the API listens, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` (needed when the server has `api.tokens`). */
  token?: string;
  /** The fetch to use (default: the global one); e.g. one with a proxy agent, or a test double. */
  fetch?: typeof globalThis.fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** How long one request may take before it is aborted (default 30 000 ms; `wait` adds its own timeout). */
  timeoutMs?: number;
}

/** Per call: an AbortSignal, and a timeout other than the client's. */
export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A submission's options: those of any call, and an idempotency key (decision 0035). */
export interface SubmitOptions extends RequestOptions {
  /** Sent as `Idempotency-Key`: printable ASCII without spaces, at most 255 characters. */
  idempotencyKey?: string;
}

function idempotencyHeaders(options: SubmitOptions): { headers?: Record<string, string> } {
  return options.idempotencyKey === undefined
    ? {}
    : { headers: { 'idempotency-key': options.idempotencyKey } };
}

export interface WaitOptions extends RequestOptions {
  /** Seconds the server waits for the run to finish (default 30, at most 300); then the run as it is. */
  timeoutS?: number;
}

/** What the server takes as an approval: a decision, or the shorthand `"approve"` / `"reject"`. */
export type ApprovalDecision = 'approve' | 'reject' | Wire.ApprovalAnswer;

/**
 * A typed client of Ratchet's HTTP API. It needs only `fetch`, so it runs in Node and in browsers; answers
 * are parsed with the API's response schemas, tolerating fields a newer server adds.
 */
export class RatchetClient {
  private readonly baseUrl: string;
  private readonly fetchImplementation: typeof globalThis.fetch;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(options: RatchetClientOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new TypeError(
        `baseUrl: "${options.baseUrl}" is not an absolute URL; give e.g. http://127.0.0.1:8080`,
      );
    }
    this.baseUrl = base.href.replace(/\/+$/, '');
    // Bound to globalThis: browsers refuse a fetch called as a method of another object.
    this.fetchImplementation = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.headers = {
      ...options.headers,
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    };
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /**
   * Starts a run (POST /v1/runs), on a new session unless `session_id` is given. With `idempotencyKey` (sent
   * as the `Idempotency-Key` header) a retried submission answers with the run the first one started
   * (`replayed: true`) instead of starting another; the same key with a different input throws a 422
   * `unprocessable` error.
   */
  submit(input: Wire.SubmitRunInput, options: SubmitOptions = {}): Promise<Wire.AcceptedRun> {
    return this.request('POST', '/v1/runs', acceptedRunSchema, {
      ...options,
      body: input,
      ...idempotencyHeaders(options),
    });
  }

  /** A run: status, result or error, usage, progress, pending question. */
  get(runId: string, options?: RequestOptions): Promise<Wire.Run> {
    return this.request('GET', `/v1/runs/${encode(runId)}`, runSchema, options);
  }

  /** The run once it is finished, or as it is when `timeoutS` (default 30) passed first. */
  wait(runId: string, options: WaitOptions = {}): Promise<Wire.Run> {
    const timeoutS = options.timeoutS ?? 30;
    const query = `?timeout_s=${encodeURIComponent(String(timeoutS))}`;
    // The server holds the request for up to timeoutS: the request's own timeout comes on top.
    const timeoutMs = (options.timeoutMs ?? this.timeoutMs) + timeoutS * 1000;
    return this.request('GET', `/v1/runs/${encode(runId)}/wait${query}`, runSchema, {
      ...options,
      timeoutMs,
    });
  }

  /** Cancels a run and its child runs (409 `conflict` when it is already finished). */
  cancel(runId: string, options: RequestOptions & { reason?: string } = {}): Promise<Wire.Run> {
    const body = options.reason === undefined ? {} : { reason: options.reason };
    return this.request('POST', `/v1/runs/${encode(runId)}/cancel`, runSchema, { ...options, body });
  }

  /** Answers a pending question; the branch of the run that asked resumes. */
  answer(
    sessionId: string,
    questionId: string,
    response: Wire.QuestionResponse,
    options?: RequestOptions,
  ): Promise<Wire.AnswerAccepted> {
    return this.request('POST', `/v1/sessions/${encode(sessionId)}/respond`, respondAcceptedSchema, {
      ...options,
      body: { question_id: questionId, response },
    });
  }

  /**
   * Decides on a tool call awaiting approval (a question of kind `approval`): approve, approve with other
   * `arguments` (checked against the tool's schema: 400 when they do not fit), or reject with a `reason`
   * the model reads; `remember` ("tool", "arguments" or {path_prefix}) approves the same call for the rest
   * of the session. The same route as `answer`, typed for approvals.
   */
  approve(
    sessionId: string,
    questionId: string,
    decision: ApprovalDecision,
    options?: RequestOptions,
  ): Promise<Wire.AnswerAccepted> {
    return this.answer(sessionId, questionId, decision, options);
  }

  /**
   * The session's remembered approvals, oldest first: tool calls a person approved for the rest of the
   * session (`remember` in an approval answer). Revoke one with `revokeApproval`.
   */
  async approvals(sessionId: string, options?: RequestOptions): Promise<Wire.RememberedApprovalView[]> {
    const path = `/v1/sessions/${encode(sessionId)}/approvals`;
    return (await this.request('GET', path, rememberedApprovalListSchema, options)).approvals;
  }

  /** Revokes a remembered approval by its `key`: later calls it covered are asked again (404 when none). */
  async revokeApproval(sessionId: string, key: string, options?: RequestOptions): Promise<void> {
    const path = `/v1/sessions/${encode(sessionId)}/approvals/${encode(key)}`;
    await this.request('DELETE', path, undefined, options);
  }

  /** The session's pending questions (ask_user, tool approvals, budgets). */
  async questions(sessionId: string, options?: RequestOptions): Promise<Wire.Question[]> {
    const path = `/v1/sessions/${encode(sessionId)}/questions`;
    return (await this.request('GET', path, questionListSchema, options)).questions;
  }

  /**
   * Every pending question and tool approval of every session, newest first (GET /v1/questions): at most
   * `limit` (default 100, at most 500), `truncated` when more are pending. Answer one with `answer` or
   * `approve` and its `session_id` and `id`.
   */
  inbox(query: { limit?: number } = {}, options?: RequestOptions): Promise<Wire.Inbox> {
    return this.request('GET', `/v1/questions${queryString(query)}`, inboxSchema, options);
  }

  /**
   * The session's chat, oldest first, each message with its index; `after` (an index) for the newer ones,
   * `sender` for one sender's only (an agent's name, "user" or a tool's name), `limit` for at most that many.
   */
  async messages(
    sessionId: string,
    query: Wire.SessionMessagesQuery = {},
    options?: RequestOptions,
  ): Promise<Wire.ChatMessage[]> {
    const path = `/v1/sessions/${encode(sessionId)}/messages${queryString(query)}`;
    return (await this.request('GET', path, messageListSchema, options)).messages;
  }

  /**
   * The chat a run works on, oldest first, each message with its index (`after`: only newer ones): a child
   * run's or team member's own chat (`chat_id` its run id), a root run's session chat (`main`).
   */
  runMessages(
    runId: string,
    query: { after?: number } = {},
    options?: RequestOptions,
  ): Promise<Wire.RunMessages> {
    const path = `/v1/runs/${encode(runId)}/messages${queryString(query)}`;
    return this.request('GET', path, runMessageListSchema, options);
  }

  /**
   * Sends a message to a session (POST /v1/sessions/:id/messages): it starts a run, or, while the session's
   * run is active, does what `on_busy` says (default: the agent's `options.on_busy`): `reject` (409
   * `session_busy`), `queue`, `steer` or `interrupt`. The answer's `delivery` says which happened. With
   * `idempotencyKey`, as `submit`: a message that started a run answers that run again (`replayed`).
   */
  send(
    sessionId: string,
    message: Wire.SendMessageInput,
    options: SubmitOptions = {},
  ): Promise<Wire.SentMessageReply> {
    return this.request('POST', `/v1/sessions/${encode(sessionId)}/messages`, sentMessageSchema, {
      ...options,
      body: message,
      ...idempotencyHeaders(options),
    });
  }

  /** Takes a queued message back before it starts its run (404 when it started already). */
  async cancelQueued(sessionId: string, messageId: string, options?: RequestOptions): Promise<void> {
    const path = `/v1/sessions/${encode(sessionId)}/queued/${encode(messageId)}`;
    await this.request('DELETE', path, undefined, options);
  }

  /** A session: its agent, status, active run, usage and queued messages. */
  session(sessionId: string, options?: RequestOptions): Promise<Wire.Session> {
    return this.request('GET', `/v1/sessions/${encode(sessionId)}`, sessionSchema, options);
  }

  /** Cancels the session's active run and deletes all its data. */
  async deleteSession(sessionId: string, options?: RequestOptions): Promise<void> {
    await this.request('DELETE', `/v1/sessions/${encode(sessionId)}`, undefined, options);
  }

  /** What the session's agents set on their state blackboard, by key. */
  async state(sessionId: string, options?: RequestOptions): Promise<Record<string, unknown>> {
    return (await this.request('GET', `/v1/sessions/${encode(sessionId)}/state`, sessionStateSchema, options))
      .state;
  }

  /** The session's task board. */
  async tasks(sessionId: string, options?: RequestOptions): Promise<Wire.SessionTask[]> {
    const path = `/v1/sessions/${encode(sessionId)}/tasks`;
    return (await this.request('GET', path, sessionTaskListSchema, options)).tasks;
  }

  /** The session's notes: shared ones and each agent's. */
  async notes(sessionId: string, options?: RequestOptions): Promise<Wire.SessionNote[]> {
    const path = `/v1/sessions/${encode(sessionId)}/notes`;
    return (await this.request('GET', path, sessionNoteListSchema, options)).notes;
  }

  /** The agents, handoff groups and teams a run may be started with, and their usage. */
  async agents(options?: RequestOptions): Promise<Wire.AgentSummary[]> {
    return (await this.request('GET', '/v1/agents', agentListSchema, options)).agents;
  }

  /**
   * An agent and the definitions its unfinished runs work under, with counts (GET /v1/agents/:name): when
   * none of them is an old worker generation's, that generation can be drained (decision 0030).
   */
  async agent(agent: string, options?: RequestOptions): Promise<Wire.AgentDetail> {
    return this.request('GET', `/v1/agents/${encode(agent)}`, agentDetailSchema, options);
  }

  /** What an agent remembers across sessions: its own notes, then the deployment's (GET /v1/agents/:name/memory). */
  async agentMemory(agent: string, options?: RequestOptions): Promise<Wire.AgentMemory> {
    return this.request('GET', `/v1/agents/${encode(agent)}/memory`, agentMemorySchema, options);
  }

  /**
   * One page of runs, newest first, with the filters given (GET /v1/runs); pass its `next_cursor` as
   * `cursor` for the next page (null: the last). `eachRun` follows the pages for you.
   */
  list(filters: Wire.RunListFilters = {}, options?: RequestOptions): Promise<Wire.RunPage> {
    return this.request('GET', `/v1/runs${queryString(filters)}`, runListSchema, options);
  }

  /**
   * Every run the filters keep, newest first, fetching page after page (`limit` runs each) as the loop asks
   * for them; a run that existed when the first page was read comes exactly once. `break` stops fetching.
   */
  async *eachRun(
    filters: Omit<Wire.RunListFilters, 'cursor'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<Wire.RunListItem, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...filters, ...(cursor === undefined ? {} : { cursor }) }, options);
      yield* page.runs;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** How many runs have each status, all of them or those created since a time (GET /v1/runs/summary). */
  summary(filters: { since?: string | Date } = {}, options?: RequestOptions): Promise<Wire.RunSummary> {
    return this.request('GET', `/v1/runs/summary${queryString(filters)}`, runSummarySchema, options);
  }

  /** One page of sessions, most recently active first (GET /v1/sessions); `eachSession` follows the pages. */
  sessions(filters: Wire.SessionListFilters = {}, options?: RequestOptions): Promise<Wire.SessionPage> {
    return this.request('GET', `/v1/sessions${queryString(filters)}`, sessionListSchema, options);
  }

  /** Every session the filters keep, most recently active first, page after page. */
  async *eachSession(
    filters: Omit<Wire.SessionListFilters, 'cursor'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<Wire.SessionListItem, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.sessions({ ...filters, ...(cursor === undefined ? {} : { cursor }) }, options);
      yield* page.sessions;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** The run and every run below it (delegations, spawns, team turns), depth first, with their lineage. */
  tree(runId: string, options?: RequestOptions): Promise<Wire.RunTree> {
    return this.request('GET', `/v1/runs/${encode(runId)}/tree`, runTreeSchema, options);
  }

  /**
   * One page of the run's timeline from its journal: iterations `from` on (default 1), `limit` a page
   * (default 20, at most 100), texts cut at `cut_at` characters (default 2000). `next_from` starts the next.
   */
  steps(runId: string, query: Wire.StepsQuery = {}, options?: RequestOptions): Promise<Wire.RunSteps> {
    const path = `/v1/runs/${encode(runId)}/steps${queryString(query)}`;
    return this.request('GET', path, runStepsSchema, options);
  }

  /** Every iteration of the run's timeline from `from` on, page after page (`limit` iterations each). */
  async *eachStep(
    runId: string,
    query: Wire.StepsQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<Wire.IterationStep, void, undefined> {
    let from: number | undefined = query.from;
    do {
      const page = await this.steps(runId, { ...query, ...(from === undefined ? {} : { from }) }, options);
      yield* page.steps;
      from = page.next_from ?? undefined;
    } while (from !== undefined);
  }

  /** The system: live workers, step queues per shard and kind, runs by status, version, config hash. */
  system(options?: RequestOptions): Promise<Wire.SystemState> {
    return this.request('GET', '/v1/system', systemStateSchema, options);
  }

  /**
   * Retries a failed or cancelled run: a new run of the same session continues it from its last recorded
   * iteration, with the run's limits unless `limits` gives new ones. 409 `conflict` with
   * `details.reason: 'run_not_retryable'` (and `retry_run_id` when it was retried already) otherwise.
   */
  retry(runId: string, limits: Wire.RetryRunInput = {}, options?: RequestOptions): Promise<Wire.AcceptedRun> {
    return this.request('POST', `/v1/runs/${encode(runId)}/retry`, acceptedRunSchema, {
      ...options,
      body: limits,
    });
  }

  /**
   * Forks a run at an iteration whose reply is recorded: a new session with the chat up to there, and a
   * run that continues it (with `input` as a new message, `agent` instead of the run's, new limits).
   */
  fork(runId: string, input: Wire.ForkRunInput, options?: RequestOptions): Promise<Wire.AcceptedRun> {
    return this.request('POST', `/v1/runs/${encode(runId)}/fork`, acceptedRunSchema, {
      ...options,
      body: input,
    });
  }

  /**
   * The webhook deliveries, newest first (`limit` default 20, at most 100): each with its status, attempts,
   * last error and next attempt. Pass `next_cursor` back as `cursor` for the next page.
   */
  webhookDeliveries(
    query: { limit?: number; cursor?: string } = {},
    options?: RequestOptions,
  ): Promise<Wire.WebhookDeliveryList> {
    return this.request(
      'GET',
      `/v1/webhooks/deliveries${queryString(query)}`,
      webhookDeliveryListSchema,
      options,
    );
  }

  /**
   * Sends a webhook delivery again now, with the same `webhook-id` (a delivered or failed one starts over,
   * one waiting for a retry is due at once). 404 for an unknown delivery, 409 `delivery_in_progress` while
   * an attempt is under way.
   */
  redeliverWebhook(deliveryId: string, options?: RequestOptions): Promise<Wire.WebhookDelivery> {
    return this.request(
      'POST',
      `/v1/webhooks/deliveries/${encode(deliveryId)}/redeliver`,
      webhookDeliverySchema,
      options,
    );
  }

  /** Creates a schedule (POST /v1/schedules): a run of `agent` on `input`, by `cron` or every `every_s` seconds. */
  createSchedule(spec: Wire.CreateScheduleBody, options?: RequestOptions): Promise<Wire.ScheduleView> {
    return this.request('POST', '/v1/schedules', scheduleViewSchema, { ...options, body: spec });
  }

  /** Every schedule, with its next fire and latest fires (GET /v1/schedules). */
  async schedules(options?: RequestOptions): Promise<Wire.ScheduleView[]> {
    return (await this.request('GET', '/v1/schedules', scheduleListSchema, options)).schedules;
  }

  schedule(scheduleId: string, options?: RequestOptions): Promise<Wire.ScheduleView> {
    return this.request('GET', `/v1/schedules/${encode(scheduleId)}`, scheduleViewSchema, options);
  }

  /** Deletes a schedule; the runs it started stay. */
  async deleteSchedule(scheduleId: string, options?: RequestOptions): Promise<void> {
    await this.request('DELETE', `/v1/schedules/${encode(scheduleId)}`, undefined, options);
  }

  /** Pauses a schedule: its fires start nothing until it is resumed, and are not caught up. */
  pauseSchedule(scheduleId: string, options?: RequestOptions): Promise<Wire.ScheduleView> {
    return this.request('POST', `/v1/schedules/${encode(scheduleId)}/pause`, scheduleViewSchema, options);
  }

  resumeSchedule(scheduleId: string, options?: RequestOptions): Promise<Wire.ScheduleView> {
    return this.request('POST', `/v1/schedules/${encode(scheduleId)}/resume`, scheduleViewSchema, options);
  }

  /**
   * Sends an event to the deployment (POST /v1/events): every run waiting for its name (wait_for_event)
   * whose match its payload contains receives it, and so does a wait that starts within
   * `events.retention_s`; each trigger of its name starts its run. Give `id` and send again until it is
   * acknowledged: the same id delivers once and starts each trigger's run once (`duplicate: true`).
   */
  sendEvent(event: Wire.SendEventInput, options?: RequestOptions): Promise<Wire.SentEvent> {
    return this.request('POST', '/v1/events', sentEventSchema, { ...options, body: event });
  }

  /**
   * Sends a signal to one run (POST /v1/runs/:id/signal): its wait_for_event for that name receives it, now
   * or when it waits later; the same `id` delivers once. 404 for an unknown run, 409 `conflict` with
   * `details.reason` `run_finished` or `signals_full`.
   */
  signal(runId: string, signal: Wire.SignalRunInput, options?: RequestOptions): Promise<Wire.SentSignal> {
    return this.request('POST', `/v1/runs/${encode(runId)}/signal`, sentSignalSchema, {
      ...options,
      body: signal,
    });
  }

  /**
   * Moves an unfinished run to its workers' current definition of its agent at its next iteration, with an
   * `agent_upgraded` event (POST /v1/runs/:id/upgrade, decision 0030). Returns the run as it is now; a
   * finished run is a `conflict`.
   */
  upgrade(runId: string, options?: RequestOptions): Promise<Wire.Run> {
    return this.request('POST', `/v1/runs/${encode(runId)}/upgrade`, runSchema, options);
  }

  /** Liveness: the API process answers (`/healthz`, no token needed). */
  health(options?: RequestOptions): Promise<Wire.Health> {
    return this.request('GET', '/healthz', healthSchema, options);
  }

  /**
   * The session's events as typed objects, each with its id in the log. A dropped connection is resumed
   * with `Last-Event-ID`, so every event comes once, in order. `break` closes the connection.
   */
  events(sessionId: string, options: EventsOptions = {}): AsyncGenerator<Wire.WireEvent, void, undefined> {
    return followEvents(
      {
        fetch: this.fetchImplementation,
        url: `${this.baseUrl}/v1/sessions/${encode(sessionId)}/events`,
        headers: this.headers,
      },
      options,
    );
  }

  private async request<Schema extends z.ZodType>(
    method: string,
    path: string,
    schema: Schema,
    options?: RequestOptions & { body?: unknown; headers?: Record<string, string> },
  ): Promise<z.output<Schema>>;
  private async request(
    method: string,
    path: string,
    schema: undefined,
    options?: RequestOptions & { body?: unknown; headers?: Record<string, string> },
  ): Promise<undefined>;
  private async request(
    method: string,
    path: string,
    schema: z.ZodType | undefined,
    options: RequestOptions & { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<unknown> {
    const url = `${this.baseUrl}${path}`;
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.headers,
      ...options.headers,
    };
    // Every request that changes something says JSON, body or none: the API refuses it otherwise (415), a
    // guard against other sites' pages, which cannot send this header without asking the server first.
    if (options.body !== undefined || (method !== 'GET' && method !== 'HEAD'))
      headers['content-type'] = 'application/json';
    const response = await this.fetchImplementation(url, {
      method,
      headers,
      signal,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    if (!response.ok) throw await apiErrorOf(response);
    if (schema === undefined) {
      await response.body?.cancel();
      return undefined;
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      throw new RatchetResponseError(`${method} ${path}: the answer is not JSON`, {
        status: response.status,
        url,
        cause,
      });
    }
    const parsed = parseLenient(schema, json);
    if (!parsed.success) {
      throw new RatchetResponseError(`${method} ${path}: the answer does not fit: ${parsed.error.message}`, {
        status: response.status,
        url,
        cause: parsed.error,
      });
    }
    return parsed.data;
  }
}

function encode(id: string): string {
  return encodeURIComponent(id);
}
