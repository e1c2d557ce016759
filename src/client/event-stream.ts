import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { runEndKinds } from '../events/event.js';
import { isEventKind, type WireEvent, wireEventSchema } from '../wire/index.js';
import { apiErrorOf, RatchetApiError, RatchetResponseError } from './client-errors.js';
import { parseLenient } from './lenient-parse.js';

export interface EventsOptions {
  /** Start after this event id (exclusive); from the start of the log when omitted. */
  after?: string;
  /**
   * Stop after this run's terminal event (`run_completed`, `run_failed`, `run_cancelled`), which is always
   * the run's last event.
   */
  untilRunEnds?: string;
  /**
   * false: the server ends the stream after the current run's terminal event (after the backlog when no
   * run is active), and the iterator ends with it. Default true: follow until stopped.
   */
  follow?: boolean;
  /** Stops the iterator (it then ends without an error) and closes the connection. */
  signal?: AbortSignal;
  /** Reconnections in a row without receiving an event before the iterator gives up (default 10). */
  maxRetries?: number;
  /** First delay before reconnecting (default 1000 ms, or the server's `retry:`); doubles each time. */
  retryDelayMs?: number;
  /** The longest delay between reconnections (default 30 000 ms). */
  maxRetryDelayMs?: number;
  /**
   * A connection that brings no byte for this long is dropped and resumed (default 45 000 ms: three of the
   * server's 15 s keep-alives). A connection whose other end is gone without a word never fails by itself.
   */
  idleTimeoutMs?: number;
}

export interface EventStreamRequest {
  fetch: typeof globalThis.fetch;
  url: string;
  headers: Record<string, string>;
}

/** Statuses worth reconnecting after: the server (or something before it) is away for a moment. */
const retryableStatuses = new Set([502, 503, 504]);

/** Where a stream stands across connections. */
interface FollowState {
  lastId: string | undefined;
  /** Connections in a row that brought no frame. */
  failures: number;
  baseDelayMs: number;
}

/** Why a connection ended without finishing the iterator: reconnect (after Retry-After when given). */
interface Reconnect {
  failure: unknown;
  retryAfterMs: number | null;
}

/**
 * The session's events, resuming with Last-Event-ID after every dropped connection: each event once, in
 * the log's order. Gives up after `maxRetries` failed connections in a row (the last error is thrown); an
 * error answer other than 502/503/504 is thrown at once.
 */
export async function* followEvents(
  request: EventStreamRequest,
  options: EventsOptions = {},
): AsyncGenerator<WireEvent, void, undefined> {
  const maxRetries = options.maxRetries ?? 10;
  const maxDelayMs = options.maxRetryDelayMs ?? 30_000;
  const state: FollowState = {
    lastId: options.after,
    failures: 0,
    baseDelayMs: options.retryDelayMs ?? 1000,
  };
  const { signal } = options;

  for (;;) {
    if (signal?.aborted) return;
    const connection = new AbortController();
    const onAbort = () => connection.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let outcome: Reconnect | 'done';
    try {
      outcome = yield* followConnection(request, options, state, connection);
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof RatchetApiError || error instanceof RatchetResponseError) throw error;
      // A network failure, or the connection cut mid-stream: resume from the last event.
      outcome = { failure: error, retryAfterMs: null };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Closes the connection when the loop stops early (`break`, `return`, an error).
      connection.abort();
    }
    if (outcome === 'done') return;
    state.failures += 1;
    if (state.failures > maxRetries) throw outcome.failure;
    const backoffMs = Math.min(maxDelayMs, state.baseDelayMs * 2 ** (state.failures - 1));
    await sleep(Math.max(backoffMs, outcome.retryAfterMs ?? 0), signal);
  }
}

/** One connection: yields its events; 'done' when the iterator is finished, else why to reconnect. */
async function* followConnection(
  request: EventStreamRequest,
  options: EventsOptions,
  state: FollowState,
  connection: AbortController,
): AsyncGenerator<WireEvent, Reconnect | 'done', undefined> {
  const url = new URL(request.url);
  if (options.follow === false) url.searchParams.set('follow', 'false');
  const response = await request.fetch(url, {
    headers: {
      ...request.headers,
      accept: 'text/event-stream',
      ...(state.lastId === undefined ? {} : { 'last-event-id': state.lastId }),
    },
    signal: connection.signal,
    cache: 'no-store',
  });
  if (response.status === 204) return 'done';
  if (!response.ok) {
    const error = await apiErrorOf(response);
    if (!retryableStatuses.has(response.status)) throw error;
    return { failure: error, retryAfterMs: error.retryAfterS === null ? null : error.retryAfterS * 1000 };
  }
  if (response.body === null) {
    throw new RatchetResponseError('the event stream has no body', {
      status: response.status,
      url: request.url,
    });
  }
  const frames = framesOf(response.body, {
    onRetry: (retryMs) => {
      state.baseDelayMs = retryMs;
    },
    idleTimeoutMs: options.idleTimeoutMs ?? 45_000,
    onIdle: () => connection.abort(),
  });
  for await (const message of frames) {
    // Every frame advances the resume point, also one of a kind this client does not know.
    if (message.id !== undefined) state.lastId = message.id;
    state.failures = 0;
    const event = readEvent(message, request.url, response.status);
    if (event === undefined) continue;
    yield event;
    if (event.run_id === options.untilRunEnds && runEndKinds.includes(event.kind)) return 'done';
  }
  // The server ended the stream: with follow=false that is the end; otherwise it is going away (a
  // restart), and the stream goes on elsewhere.
  if (options.follow === false) return 'done';
  const ended = { code: 'unavailable' as const, message: 'the event stream ended', details: {} };
  return { failure: new RatchetApiError(503, ended, { fromEnvelope: false }), retryAfterMs: null };
}

/**
 * The complete frames of an SSE body (a frame cut off by a dropped connection is never one). `onIdle` is
 * called when no byte came for `idleTimeoutMs` while waiting for the next one.
 */
async function* framesOf(
  body: ReadableStream<Uint8Array>,
  options: { onRetry: (retryMs: number) => void; idleTimeoutMs: number; onIdle: () => void },
): AsyncGenerator<EventSourceMessage, void, undefined> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => pending.push(message), onRetry: options.onRetry });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const idle = setTimeout(options.onIdle, options.idleTimeoutMs);
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } finally {
      clearTimeout(idle);
    }
    if (chunk.done) return;
    parser.feed(decoder.decode(chunk.value, { stream: true }));
    yield* pending.splice(0);
  }
}

/** One SSE frame as a typed event; undefined for a kind this client does not know (a newer server's). */
function readEvent(message: EventSourceMessage, url: string, status: number): WireEvent | undefined {
  const kind = message.event ?? 'message';
  if (!isEventKind(kind)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(message.data);
  } catch (cause) {
    throw new RatchetResponseError(`event ${message.id ?? '?'} is not JSON`, { status, url, cause });
  }
  const parsed = parseLenient(wireEventSchema, json);
  if (!parsed.success) {
    throw new RatchetResponseError(
      `event ${message.id ?? '?'} (${kind}) does not fit its schema: ${parsed.error.message}`,
      { status, url, cause: parsed.error },
    );
  }
  return parsed.data as WireEvent;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
