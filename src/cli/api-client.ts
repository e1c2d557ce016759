import { z } from 'zod';
import { type EventKind, eventDataSchemas, eventKinds, type RatchetEvent } from '../events/event.js';
import type { QuestionResponse } from '../workflows/index.js';
import { createSseParser, type SseMessage } from './sse-parser.js';

/** An error answer of the API ({error: {code, message, details}}), or a failure to reach it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown = undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

// What the API sends us is read leniently: only the fields the CLI uses.
const errorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});
const submittedSchema = z.object({ run_id: z.string(), session_id: z.string() });
const pendingQuestionSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  run_id: z.string(),
  agent: z.string(),
  kind: z.enum(['ask_user', 'approval', 'budget']),
  question: z.string(),
  options: z.array(z.string()),
  tool: z.object({ name: z.string(), tool_call_id: z.string(), arguments: z.string() }).nullable(),
  status: z.string(),
  timeout_at: z.string().nullable(),
});
const runViewSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  agent: z.string(),
  status: z.string(),
  result: z.string().nullable().optional(),
  error: z.object({ code: z.string(), message: z.string() }).nullable().optional(),
  parent_run_id: z.string().nullable().optional(),
  iterations: z.number().optional(),
  usage: z.object({ input_tokens: z.number(), output_tokens: z.number() }).optional(),
  cost_usd: z.number().optional(),
  progress: z.object({ fraction: z.number().nullable(), message: z.string() }).nullable().optional(),
  pending_question: pendingQuestionSchema.nullable().optional(),
  created_at: z.string().optional(),
  finished_at: z.string().nullable().optional(),
});
const sessionViewSchema = z.object({
  id: z.string(),
  agent: z.string(),
  status: z.string(),
  active_run_id: z.string().nullable(),
});
const questionListSchema = z.object({ questions: z.array(pendingQuestionSchema) });
const streamedEventSchema = z.object({
  kind: z.string().optional(),
  run_id: z.string(),
  agent: z.string(),
  time: z.string(),
  data: z.unknown(),
});

export type SubmittedRun = z.infer<typeof submittedSchema>;
export type RunSummary = z.infer<typeof runViewSchema>;
export type SessionSummary = z.infer<typeof sessionViewSchema>;
/** A pending question as GET /v1/sessions/:id/questions lists it. */
export type PendingQuestion = z.infer<typeof pendingQuestionSchema>;

/** An event read from the SSE stream: one of ours, or a kind this CLI does not know (a newer server). */
export type StreamedEvent =
  | { known: true; event: RatchetEvent }
  | {
      known: false;
      id: string | undefined;
      kind: string;
      runId: string | undefined;
      problem: string | undefined;
    };

export interface ApiClientOptions {
  /** The API's base URL, without /v1. */
  url: string;
  /** Sent as a bearer token when given. */
  token?: string | undefined;
}

export interface EventStreamOptions {
  /** Resume after this event id (sent as Last-Event-ID). */
  after?: string | undefined;
  /** `false`: the stream ends after the current run's terminal event. */
  follow?: boolean;
  signal?: AbortSignal;
}

export interface ApiClient {
  submitRun(body: {
    input: string;
    agent?: string | undefined;
    max_iterations?: number;
    timeout_s?: number;
  }): Promise<SubmittedRun>;
  getRun(runId: string): Promise<RunSummary>;
  cancelRun(runId: string, reason?: string): Promise<void>;
  respond(sessionId: string, questionId: string, response: QuestionResponse): Promise<void>;
  getSession(sessionId: string): Promise<SessionSummary>;
  /** The session's pending questions (its runs' and their children's). */
  listQuestions(sessionId: string): Promise<PendingQuestion[]>;
  /** One connection to the session's event stream; ends when the server ends it. */
  sessionEvents(sessionId: string, options?: EventStreamOptions): AsyncGenerator<SseMessage>;
}

/** A client of Ratchet's HTTP API (/v1), over the global fetch. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = options.url.replace(/\/+$/, '');
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...extra,
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
  });

  async function request(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await send(`${base}${path}`, {
      method,
      headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw errorOf(response.status, text);
    return text === '' ? undefined : parseJson(text, `${method} ${path}`);
  }

  return {
    async submitRun(body) {
      return parseBody(submittedSchema, await request('POST', '/v1/runs', body), 'POST /v1/runs');
    },
    async getRun(runId) {
      const path = `/v1/runs/${encodeURIComponent(runId)}`;
      return parseBody(runViewSchema, await request('GET', path), `GET ${path}`);
    },
    async cancelRun(runId, reason) {
      await request(
        'POST',
        `/v1/runs/${encodeURIComponent(runId)}/cancel`,
        reason === undefined ? {} : { reason },
      );
    },
    async respond(sessionId, questionId, response) {
      await request('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/respond`, {
        question_id: questionId,
        response,
      });
    },
    async getSession(sessionId) {
      const path = `/v1/sessions/${encodeURIComponent(sessionId)}`;
      return parseBody(sessionViewSchema, await request('GET', path), `GET ${path}`);
    },
    async listQuestions(sessionId) {
      const path = `/v1/sessions/${encodeURIComponent(sessionId)}/questions`;
      return parseBody(questionListSchema, await request('GET', path), `GET ${path}`).questions;
    },
    async *sessionEvents(sessionId, streamOptions = {}) {
      const query = streamOptions.follow === false ? '?follow=false' : '';
      const response = await send(`${base}/v1/sessions/${encodeURIComponent(sessionId)}/events${query}`, {
        headers: headers({
          accept: 'text/event-stream',
          ...(streamOptions.after ? { 'last-event-id': streamOptions.after } : {}),
        }),
        ...(streamOptions.signal ? { signal: streamOptions.signal } : {}),
      });
      if (!response.ok) throw errorOf(response.status, await response.text());
      if (!response.body) return;
      const messages: SseMessage[] = [];
      const parse = createSseParser((message) => messages.push(message));
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        parse(decoder.decode(chunk, { stream: true }));
        yield* messages.splice(0);
      }
      parse(decoder.decode());
      yield* messages.splice(0);
    },
  };
}

/** Reads one SSE message of the events endpoint (its data is the event as JSON; its id is the log id). */
export function parseStreamedEvent(message: SseMessage): StreamedEvent {
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    return unknownEvent(message, message.event, undefined, 'its data is not JSON');
  }
  const envelope = streamedEventSchema.safeParse(value);
  if (!envelope.success)
    return unknownEvent(message, message.event, undefined, 'it has no run_id, agent or time');
  const kind = envelope.data.kind ?? message.event;
  const id = message.id ?? (value as { id?: unknown }).id;
  if (!(eventKinds as readonly string[]).includes(kind) || typeof id !== 'string') {
    return unknownEvent(message, kind, envelope.data.run_id, undefined);
  }
  const data = eventDataSchemas[kind as EventKind].safeParse(envelope.data.data);
  if (!data.success) {
    return unknownEvent(
      message,
      kind,
      envelope.data.run_id,
      `its data does not match: ${data.error.message}`,
    );
  }
  const { run_id, agent, time } = envelope.data;
  return { known: true, event: { v: 1, id, kind, run_id, agent, time, data: data.data } as RatchetEvent };
}

function unknownEvent(
  message: SseMessage,
  kind: string,
  runId: string | undefined,
  problem: string | undefined,
): StreamedEvent {
  return { known: false, id: message.id, kind, runId, problem };
}

async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ApiError(
      0,
      'unreachable',
      `cannot reach the API at ${new URL(url).origin}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
    );
  }
}

function errorOf(status: number, text: string): ApiError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = errorBodySchema.safeParse(value);
  if (parsed.success) {
    const { code, message, details } = parsed.data.error;
    return new ApiError(status, code, message, details);
  }
  return new ApiError(status, 'http_error', `the API answered ${status}: ${text.slice(0, 200)}`);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(0, 'bad_response', `${what}: the API's answer is not JSON: ${text.slice(0, 200)}`);
  }
}

function parseBody<Schema extends z.ZodType>(schema: Schema, value: unknown, what: string): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ApiError(0, 'bad_response', `${what}: unexpected answer from the API: ${parsed.error.message}`);
  }
  return parsed.data;
}
