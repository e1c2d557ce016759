import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { RatchetEvent } from '../events/event.js';
import { toWireEvent } from './wire-views.js';

export interface SseConnectionOptions {
  /** Interval of `: keep-alive` comments (they keep proxies from closing an idle stream). */
  keepAliveMs: number;
  /** A client that takes no bytes for this long while its buffer is full is disconnected (it may resume). */
  drainTimeoutMs: number;
}

/**
 * One Server-Sent Events response. Writes respect backpressure: when the client reads slower than events
 * come, `send` waits for the socket to drain, and the caller (which reads Redis for this client only)
 * stops reading meanwhile. Nothing else waits for a slow client.
 */
export class SseConnection {
  private readonly controller = new AbortController();
  private readonly keepAlive: NodeJS.Timeout;
  private readonly raw: ServerResponse;

  constructor(
    reply: FastifyReply,
    private readonly options: SseConnectionOptions,
  ) {
    reply.hijack();
    this.raw = reply.raw;
    this.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Reverse proxies (nginx) must pass events on as they come.
      'x-accel-buffering': 'no',
    });
    this.raw.flushHeaders();
    this.raw.on('close', () => this.controller.abort());
    this.keepAlive = setInterval(() => {
      // A client whose buffer is full does not need a keep-alive: it has bytes to read.
      if (!this.raw.writableNeedDrain) this.raw.write(': keep-alive\n\n');
    }, options.keepAliveMs);
    this.keepAlive.unref();
    this.controller.signal.addEventListener('abort', () => clearInterval(this.keepAlive), { once: true });
  }

  /** Aborted when the client disconnects or the stream is closed. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Sends one event; false when the client is gone (or was too slow and got disconnected). */
  async send(event: RatchetEvent): Promise<boolean> {
    if (this.signal.aborted) return false;
    if (this.raw.write(formatSseEvent(event))) return true;
    return this.drained();
  }

  /** Ends the response (the client sees the stream end). */
  close(): void {
    if (!this.raw.writableEnded) this.raw.end();
    this.controller.abort();
  }

  private drained(): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (drained: boolean) => {
        clearTimeout(timer);
        this.raw.off('drain', onDrain);
        this.signal.removeEventListener('abort', onAbort);
        resolve(drained);
      };
      const onDrain = () => finish(true);
      const onAbort = () => finish(false);
      const timer = setTimeout(() => {
        this.raw.destroy();
        finish(false);
      }, this.options.drainTimeoutMs);
      this.raw.once('drain', onDrain);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** One event as an SSE frame: its log id, its kind as the event type, the event as one line of JSON. */
export function formatSseEvent(event: RatchetEvent): string {
  return `id: ${event.id}\nevent: ${event.kind}\ndata: ${JSON.stringify(toWireEvent(event))}\n\n`;
}
