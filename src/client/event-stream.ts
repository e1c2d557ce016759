import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { runEndKinds } from '../events/event.js';
import { apiErrorOf, RatchetApiError, RatchetResponseError } from './client-errors.js';
import { parseLenient } from './lenient-parse.js';
import { isEventKind, type RatchetClientEvent, wireEventSchemaOf } from './wire-schemas.js';

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
}

export interface EventStreamRequest {
  fetch: typeof globalThis.fetch;
  url: string;
  headers: Record<string, string>;
}

/** Statuses worth reconnecting after: the server (or something before it) is away for a moment. */
const retryableStatuses = new Set([502, 503, 504]);

/**
 * The session's events, resuming with Last-Event-ID after every dropped connection: each event once, in
 * the log's order. Gives up after `maxRetries` failed connections in a row (the last error is thrown); an
 * error answer other than 502/503/504 is thrown at once.
 */
export async function* followEvents(
  request: EventStreamRequest,
  options: EventsOptions = {},
): AsyncGenerator<RatchetClientEvent, void, undefined> {
  const maxRetries = options.maxRetries ?? 10;
  const maxDelayMs = options.maxRetryDelayMs ?? 30_000;
  let baseDelayMs = options.retryDelayMs ?? 1000;
  let lastId = options.after;
  let failures = 0;
  const { signal } = options;

  for (;;) {
    if (signal?.aborted) return;
    const connection = new AbortController();
    const onAbort = () => connection.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let failure: unknown;
    let retryAfterMs: number | null = null;
    try {
      const url = new URL(request.url);
      if (options.follow === false) url.searchParams.set('follow', 'false');
      const response = await request.fetch(url, {
        headers: {
          ...request.headers,
          accept: 'text/event-stream',
          ...(lastId === undefined ? {} : { 'last-event-id': lastId }),
        },
        signal: connection.signal,
        cache: 'no-store',
      });
      if (response.status === 204) return;
      if (!response.ok) {
        const error = await apiErrorOf(response);
        if (!retryableStatuses.has(response.status)) throw error;
        failure = error;
        if (error.retryAfterS !== null) retryAfterMs = error.retryAfterS * 1000;
      } else if (response.body === null) {
        throw new RatchetResponseError('the event stream has no body', {
          status: response.status,
          url: request.url,
        });
      } else {
        const pending: EventSourceMessage[] = [];
        const parser = createParser({
          onEvent: (message) => pending.push(message),
          onRetry: (retryMs) => {
            baseDelayMs = retryMs;
          },
        });
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
          for (const message of pending.splice(0)) {
            // Every frame advances the resume point, also one of a kind this client does not know.
            if (message.id !== undefined) lastId = message.id;
            failures = 0;
            const event = readEvent(message, request.url, response.status);
            if (event === undefined) continue;
            yield event;
            if (
              options.untilRunEnds !== undefined &&
              event.run_id === options.untilRunEnds &&
              runEndKinds.includes(event.kind)
            ) {
              return;
            }
          }
        }
        // The server ended the stream: with follow=false that is the end; otherwise it is going away
        // (a restart), and the stream goes on elsewhere.
        if (options.follow === false) return;
        failure = new RatchetApiError(
          503,
          { code: 'unavailable', message: 'the event stream ended', details: {} },
          { fromEnvelope: false },
        );
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof RatchetApiError || error instanceof RatchetResponseError) throw error;
      // A network failure, or the connection cut mid-stream: resume from the last event.
      failure = error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Closes the connection when the loop stops early (`break`, `return`, an error).
      connection.abort();
    }
    failures += 1;
    if (failures > maxRetries) throw failure;
    const backoffMs = Math.min(maxDelayMs, baseDelayMs * 2 ** (failures - 1));
    await sleep(Math.max(backoffMs, retryAfterMs ?? 0), signal);
  }
}

/** One SSE frame as a typed event; undefined for a kind this client does not know (a newer server's). */
function readEvent(message: EventSourceMessage, url: string, status: number): RatchetClientEvent | undefined {
  const kind = message.event ?? 'message';
  if (!isEventKind(kind)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(message.data);
  } catch (cause) {
    throw new RatchetResponseError(`event ${message.id ?? '?'} is not JSON`, { status, url, cause });
  }
  const parsed = parseLenient(wireEventSchemaOf(kind), json);
  if (!parsed.success) {
    throw new RatchetResponseError(
      `event ${message.id ?? '?'} (${kind}) does not fit its schema: ${parsed.error.message}`,
      { status, url, cause: parsed.error },
    );
  }
  return parsed.data as RatchetClientEvent;
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
