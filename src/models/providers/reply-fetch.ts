import { AsyncLocalStorage } from 'node:async_hooks';

/** What a reply body cut off at its byte bound fails with, inside the provider package's own errors. */
export class ReplyBodyTooLarge extends Error {
  constructor(
    readonly bytes: number,
    readonly maxReplyChars: number,
  ) {
    super(`the reply body took more than ${bytes} bytes`);
    this.name = 'ReplyBodyTooLarge';
  }
}

/**
 * What a request that stopped sending fails with, inside the provider package's own errors: no first byte of
 * a streamed reply within `first_token_timeout_ms`, or a gap between body chunks over `idle_timeout_ms`.
 */
export class ReplyStalled extends Error {
  constructor(
    readonly phase: 'first_token' | 'idle',
    readonly timeoutMs: number,
  ) {
    super(
      phase === 'first_token'
        ? `no byte of the streamed reply within first_token_timeout_ms (${timeoutMs} ms)`
        : `the reply stopped coming for idle_timeout_ms (${timeoutMs} ms)`,
    );
    this.name = 'ReplyStalled';
  }
}

/**
 * How many bytes a reply body of at most `maxReplyChars` characters may take on the wire: a JSON body six
 * bytes a character (the longest JSON escape, \u0000), an event stream 32 (every delta is an event with its
 * own envelope), and 1 MiB for the rest of the envelope. Over it, the body is cut off: a runaway reply is never
 * read whole, whatever part of it (text, tool arguments, reasoning) grows.
 */
export function replyByteBound(maxReplyChars: number, eventStream: boolean): number {
  return maxReplyChars * (eventStream ? 32 : 6) + 1024 * 1024;
}

export interface ReplyFetchOptions {
  maxReplyChars: number;
  /** A streamed request's longest wait from sending to the first byte of the body (headers included). */
  firstTokenTimeoutMs: number;
  /** The longest gap between body chunks (and, unstreamed, from the headers to the first chunk). */
  idleTimeoutMs: number;
}

/**
 * What the completer tells the fetch about the one model call it makes (the provider package calls the fetch
 * in between, within the same async context): whether the reply is streamed, and the timers to clear when
 * the call is over, however it ended.
 */
interface ModelCall {
  streaming: boolean;
  cleanups: Set<() => void>;
}

const currentCall = new AsyncLocalStorage<ModelCall>();

/**
 * Runs one model call (`doGenerate` / `doStream` and reading the stream through) so that a `replyFetch` under
 * it knows whether the reply is streamed; every stall timer the call started is cleared when it settles.
 */
export async function watchModelCall<T>(streaming: boolean, call: () => Promise<T>): Promise<T> {
  const state: ModelCall = { streaming, cleanups: new Set() };
  try {
    return await currentCall.run(state, call);
  } finally {
    for (const cleanup of state.cleanups) cleanup();
  }
}

/**
 * A fetch for a provider package that watches each reply body:
 * - it is cut off at replyByteBound: the package's reader then fails with ReplyBodyTooLarge as the cause,
 *   which the completer reports as reply_too_large;
 * - a request that stops sending is aborted with ReplyStalled (model_stalled): a streamed request that brings
 *   no byte within `firstTokenTimeoutMs`, or a body (streamed or not) with a gap over `idleTimeoutMs`. An
 *   unstreamed reply is generated before its headers are sent, so only the call's `timeout_ms` bounds the wait
 *   for them. Any byte counts, keep-alive comments and pings included: the watch is for a dead connection or
 *   server, not a model thinking at length.
 * The timers are unref'd (they never hold the process open) and cleared when the body ends, fails or is
 * cancelled, and by watchModelCall when the call settles.
 */
export function replyFetch(options: ReplyFetchOptions, base: typeof fetch = fetch): typeof fetch {
  const { maxReplyChars, firstTokenTimeoutMs, idleTimeoutMs } = options;
  return async (input, init) => {
    const call = currentCall.getStore();
    const streaming = call?.streaming === true;
    const controller = new AbortController();
    const outer = init?.signal ?? undefined;
    const onAbort = (): void => controller.abort(outer?.reason);
    if (outer?.aborted) controller.abort(outer.reason);
    else outer?.addEventListener('abort', onAbort, { once: true });
    // Errors the body the caller reads, once it is handed out; until then an abort fails the fetch itself.
    let failBody: ((error: ReplyStalled) => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const stop = (): void => {
      clearTimeout(timer);
      timer = undefined;
      outer?.removeEventListener('abort', onAbort);
      call?.cleanups.delete(stop);
    };
    call?.cleanups.add(stop);
    const arm = (phase: ReplyStalled['phase'], ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const stalled = new ReplyStalled(phase, ms);
        failBody?.(stalled);
        controller.abort(stalled);
        stop();
      }, ms);
      timer.unref();
    };

    if (streaming) arm('first_token', firstTokenTimeoutMs);
    let response: Response;
    try {
      response = await base(input, { ...init, signal: controller.signal });
    } catch (error) {
      stop();
      throw error;
    }
    if (response.body === null) {
      stop();
      return response;
    }
    // A streamed reply's first-token wait runs on to its first body byte.
    if (!streaming) arm('idle', idleTimeoutMs);
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const bound = replyByteBound(maxReplyChars, eventStream);
    let bytes = 0;
    const watched = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        start(transform) {
          failBody = (error) => transform.error(error);
        },
        transform(chunk, transform) {
          bytes += chunk.byteLength;
          if (bytes > bound) {
            stop();
            transform.error(new ReplyBodyTooLarge(bound, maxReplyChars));
            return;
          }
          arm('idle', idleTimeoutMs);
          transform.enqueue(chunk);
        },
        flush: stop,
        cancel: stop,
      }),
    );
    return new Response(watched, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
