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
    const stream = target.pathname.endsWith('/events');
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
    if (!stream) return response;
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
