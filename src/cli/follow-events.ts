import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiClient, ApiError, parseStreamedEvent, type StreamedEvent } from './api-client.js';

export interface FollowEventsOptions {
  /** Start after this event id; omitted: from the session's first event. */
  after?: string;
  signal: AbortSignal;
  /** A connection that sends nothing for this long (not even a keep-alive comment) is replaced. */
  idleTimeoutMs?: number;
  /** Consecutive failed connections before giving up. */
  maxFailures?: number;
  /** Told about each lost connection before the next try. */
  onReconnect?: (error: unknown, delayMs: number) => void;
}

/**
 * A session's events, for as long as the caller iterates: when the connection drops or stalls it reconnects
 * with Last-Event-ID, so the caller sees every event once, in order. Errors the server means (401, 404, …)
 * and a server that stays unreachable end the iteration with an ApiError.
 */
export async function* followSessionEvents(
  client: ApiClient,
  sessionId: string,
  options: FollowEventsOptions,
): AsyncGenerator<StreamedEvent> {
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  const maxFailures = options.maxFailures ?? 10;
  let after = options.after;
  let failures = 0;
  while (!options.signal.aborted) {
    const connection = new AbortController();
    const abortConnection = () => connection.abort();
    options.signal.addEventListener('abort', abortConnection, { once: true });
    let idleTimer = setTimeout(abortConnection, idleTimeoutMs);
    let problem: unknown;
    try {
      for await (const message of client.sessionEvents(sessionId, {
        after,
        follow: false,
        signal: connection.signal,
      })) {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(abortConnection, idleTimeoutMs);
        failures = 0;
        if (message.id !== undefined) after = message.id;
        yield parseStreamedEvent(message);
      }
    } catch (error) {
      if (options.signal.aborted) return;
      if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 408) {
        throw error;
      }
      problem = error;
    } finally {
      clearTimeout(idleTimer);
      options.signal.removeEventListener('abort', abortConnection);
    }
    // The stream ended (or broke) before the caller had what it wanted: connect again after the last event.
    failures += 1;
    if (failures > maxFailures) {
      throw problem instanceof ApiError
        ? problem
        : new ApiError(0, 'unreachable', `the event stream keeps failing: ${describe(problem)}`);
    }
    const delayMs = Math.min(5_000, 250 * 2 ** (failures - 1));
    options.onReconnect?.(problem ?? new Error('the server ended the event stream'), delayMs);
    try {
      await sleep(delayMs, undefined, { signal: options.signal });
    } catch {
      return;
    }
  }
}

function describe(error: unknown): string {
  if (error === undefined) return 'the server ends it early';
  return error instanceof Error ? error.message : String(error);
}
