import { RatchetApiError, RatchetClient, RatchetResponseError } from '../client/index.js';

/**
 * The CLI talks to the API through `ratchet/client` (the client users get), with a fetch of its own that
 * adds what a person at a terminal needs: a network failure names the API it could not reach, and a lost
 * event stream is told (with why) when the client reconnects.
 */

/** No HTTP answer at all: nothing listens at the URL, its name does not resolve, the connection is refused. */
export class ApiUnreachableError extends Error {
  override readonly name = 'ApiUnreachableError';
}

export interface CliApi {
  /** The API's base URL (without /v1). */
  url: string;
  client: RatchetClient;
  /**
   * Calls `listener` each time the client reconnects an event stream, with why the last connection ended;
   * returns the unsubscribe.
   */
  onStreamLost(listener: (reason: string) => void): () => void;
}

export function connectApi(url: string, token: string | undefined): CliApi {
  const listeners = new Set<(reason: string) => void>();
  /** Why the last event-stream connection ended (told when the next one starts), if it did. */
  let lost: string | undefined;
  const cliFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const target = new URL(input instanceof Request ? input.url : input);
    // A session's event stream is a GET; POST /v1/events sends one event and is an ordinary call.
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const stream = method === 'GET' && target.pathname.endsWith('/events');
    if (stream && lost !== undefined) {
      for (const listener of listeners) listener(lost);
      lost = undefined;
    }
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      if (isAbort(error)) throw error;
      const failure = new ApiUnreachableError(
        `cannot reach the API at ${target.origin}: ${networkCause(error)}`,
        { cause: error },
      );
      if (stream) lost = failure.message;
      throw failure;
    }
    if (!stream) return response.status === 503 ? explainUnavailable(response, url) : response;
    if (!response.ok || response.body === null) {
      lost = `HTTP ${response.status}`;
      return response;
    }
    const watched = watchBody(response.body, (reason) => {
      lost = reason;
    });
    return new Response(watched, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return {
    url,
    client: new RatchetClient({ baseUrl: url, ...(token ? { token } : {}), fetch: cliFetch }),
    onStreamLost(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * The one line the CLI prints for a failed API call (exit 1), or undefined when the error is not one (a bug:
 * its stack is printed).
 */
export function apiFailure(error: unknown): string | undefined {
  if (error instanceof ApiUnreachableError) return error.message;
  if (error instanceof RatchetApiError) return `${error.code}: ${error.message}`;
  if (error instanceof RatchetResponseError) return `unexpected answer from the API: ${error.message}`;
  if (error instanceof Error && error.name === 'TimeoutError')
    return `the API did not answer: ${error.message}`;
  return undefined;
}

/** How long the CLI waits for /readyz when a call answered 503. */
const readinessTimeoutMs = 3_000;

/**
 * A 503 `unavailable` says only "temporarily unavailable" (the API names no Redis error, address or port to
 * its clients); the API's public /readyz says which dependency is down. Ask it, and when a check fails, say so
 * in the error's message (its code, details and Retry-After stay): "Redis is unreachable" is what a person
 * at a terminal can act on. Any other answer is left as it came.
 */
async function explainUnavailable(response: Response, url: string): Promise<Response> {
  const text = await response.text();
  const same = () =>
    new Response(text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  const error = unavailableError(text);
  if (error === undefined) return same();
  const checks = await failingChecks(url);
  if (checks === undefined) return same();
  const reported = Object.entries(checks)
    .map(([check, state]) => `${check}: ${state}`)
    .join(', ');
  const origin = new URL(url).origin;
  const message =
    checks.redis !== undefined && checks.redis !== 'ok'
      ? `Redis is unreachable from the API at ${origin} (its /readyz reports ${reported}): start Redis, or ` +
        "check the API's redis.url, then retry"
      : `the API at ${origin} is not ready (its /readyz reports ${reported}); retry later`;
  const body = { error: { ...error, message, details: { ...error.details, checks } } };
  return new Response(JSON.stringify(body), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** The error of a 503 answer in the API's envelope, code `unavailable` without a reason of its own. */
function unavailableError(
  text: string,
): { code: string; message: string; details: Record<string, unknown> } | undefined {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error as
      | { code?: unknown; message?: unknown; details?: Record<string, unknown> }
      | undefined;
    if (error?.code !== 'unavailable' || typeof error.message !== 'string') return undefined;
    const details = typeof error.details === 'object' && error.details !== null ? error.details : {};
    if (details.reason !== undefined) return undefined;
    return { code: error.code, message: error.message, details };
  } catch {
    return undefined;
  }
}

/** /readyz's checks when one of them fails; undefined when it is ready, or does not say in time. */
async function failingChecks(url: string): Promise<Record<string, string> | undefined> {
  try {
    const answer = await fetch(`${url.replace(/\/+$/, '')}/readyz`, {
      signal: AbortSignal.timeout(readinessTimeoutMs),
    });
    const body = (await answer.json()) as { error?: { details?: { checks?: unknown } } };
    const checks = body.error?.details?.checks;
    if (typeof checks !== 'object' || checks === null) return undefined;
    const entries = Object.entries(checks).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    );
    return entries.some(([, state]) => state !== 'ok') ? Object.fromEntries(entries) : undefined;
  } catch {
    return undefined;
  }
}

/** The body as it comes, noting why it ended: the server closed it, the connection broke, or it went silent. */
function watchBody(
  body: ReadableStream<Uint8Array>,
  ended: (reason: string) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          ended('the server ended the event stream');
          controller.close();
        } else {
          controller.enqueue(chunk.value);
        }
      } catch (error) {
        // The client aborts a connection on its own only when it brought nothing for its idle timeout.
        ended(isAbort(error) ? 'no data from the server for too long' : networkCause(error));
        controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/** undici's "fetch failed" / "terminated" hide the reason in `cause` (ECONNREFUSED, other side closed …). */
function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
