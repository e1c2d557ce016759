import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReplyStalled, replyFetch, watchModelCall } from '../../../src/models/providers/reply-fetch.js';

/**
 * A reply whose body the test writes piece by piece, served by a stand-in for the network fetch (so the only
 * timers in play are the watch's own, counted with vitest's fake timers).
 */
function controlledReply() {
  let body!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      body = controller;
    },
  });
  let signal: AbortSignal | undefined;
  const base: typeof fetch = async (_input, init) => {
    signal = init?.signal ?? undefined;
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
  };
  return {
    base,
    send: (text: string) => body.enqueue(new TextEncoder().encode(text)),
    end: () => body.close(),
    /** The signal the watch handed the network fetch (aborted when it gives up on the request). */
    signal: () => signal,
  };
}

const timeouts = { maxReplyChars: 1000, firstTokenTimeoutMs: 1000, idleTimeoutMs: 500 };

afterEach(() => {
  vi.useRealTimers();
});

describe('replyFetch stall timers', () => {
  it('are cleared when the body is read to its end, streamed or not', async () => {
    vi.useFakeTimers();
    for (const streaming of [true, false]) {
      const reply = controlledReply();
      const fetchWatched = replyFetch(timeouts, reply.base);
      const text = await watchModelCall(streaming, async () => {
        const response = await fetchWatched('http://model.test');
        expect(vi.getTimerCount()).toBe(1);
        reply.send('data: a\n\n');
        reply.end();
        const whole = await response.text();
        // Cleared by the body's end itself, before the call settles.
        expect(vi.getTimerCount()).toBe(0);
        return whole;
      });
      expect(text).toBe('data: a\n\n');
      expect(vi.getTimerCount()).toBe(0);
    }
  });

  it('are cleared when the call settles, even for a body nobody read', async () => {
    vi.useFakeTimers();
    const reply = controlledReply();
    const fetchWatched = replyFetch(timeouts, reply.base);
    await watchModelCall(true, async () => {
      await fetchWatched('http://model.test');
      expect(vi.getTimerCount()).toBe(1);
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('are cleared when the reader cancels the body, or the caller aborts', async () => {
    vi.useFakeTimers();
    const reply = controlledReply();
    const fetchWatched = replyFetch(timeouts, reply.base);
    const controller = new AbortController();
    const response = await fetchWatched('http://model.test', { signal: controller.signal });
    expect(vi.getTimerCount()).toBe(1);
    await response.body?.cancel();
    expect(vi.getTimerCount()).toBe(0);

    const aborted = controlledReply();
    const reason = new Error('run cancelled');
    await watchModelCall(true, async () => {
      await replyFetch(timeouts, aborted.base)('http://model.test', { signal: controller.signal });
      controller.abort(reason);
      expect(aborted.signal()?.reason).toBe(reason);
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fire only after a gap: each byte restarts the idle wait, and a stall fails the body and aborts the request', async () => {
    vi.useFakeTimers();
    const reply = controlledReply();
    const fetchWatched = replyFetch(timeouts, reply.base);
    const outcome = await watchModelCall(true, async () => {
      const response = await fetchWatched('http://model.test');
      const reader = response.body?.getReader();
      if (!reader) throw new Error('no body');
      // 900 ms of first-token wait (under 1000), then pieces 400 ms apart (under 500): never stalled.
      await vi.advanceTimersByTimeAsync(900);
      for (let piece = 0; piece < 5; piece += 1) {
        reply.send(`data: ${piece}\n\n`);
        await reader.read();
        await vi.advanceTimersByTimeAsync(400);
      }
      expect(reply.signal()?.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(100);
      return reader.read().then(
        () => undefined,
        (error: unknown) => error,
      );
    });
    expect(outcome).toBeInstanceOf(ReplyStalled);
    expect(outcome).toMatchObject({ phase: 'idle', timeoutMs: 500 });
    expect(reply.signal()?.reason).toBe(outcome);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never hold the process open (unref)', async () => {
    const keepingAlive = () =>
      process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const reply = controlledReply();
    const fetchWatched = replyFetch(timeouts, reply.base);
    const before = keepingAlive();
    await watchModelCall(true, async () => {
      await fetchWatched('http://model.test');
      // The watch's timer is running, but is not among what keeps the event loop alive.
      expect(keepingAlive()).toBe(before);
    });
  });
});
