import { EventSource } from 'eventsource';

export interface ReceivedEvent {
  /** The frame's id (the event's log id). */
  id: string;
  /** The frame's event type (the event's kind). */
  type: string;
  data: { id: string; kind: string; run_id: string; agent: string; time: string; data: unknown };
}

export interface SseClientOptions {
  /** Sent as Last-Event-ID on the first connection (an EventSource sends it itself on reconnection). */
  lastEventId?: string;
  token?: string;
}

/** An `eventsource` client that records every event it receives and every error it reports. */
export class SseClient {
  readonly events: ReceivedEvent[] = [];
  readonly errors: { code: number | undefined; message: string | undefined }[] = [];
  readonly source: EventSource;
  private readonly waiters: { check: () => boolean; resolve: () => void }[] = [];

  constructor(url: string, kinds: readonly string[], options: SseClientOptions = {}) {
    this.source = new EventSource(url, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: {
            ...init.headers,
            ...(options.lastEventId && this.events.length === 0
              ? { 'Last-Event-ID': options.lastEventId }
              : {}),
            ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          },
        }),
    });
    const record = (event: MessageEvent) => {
      this.events.push({ id: event.lastEventId, type: event.type, data: JSON.parse(event.data) });
      this.notify();
    };
    for (const kind of kinds) if (kind !== 'error') this.source.addEventListener(kind, record);
    // Our `error` event kind shares its name with EventSource's connection errors: a frame has data.
    this.source.addEventListener('error', (event) => {
      if (event instanceof MessageEvent) return record(event);
      this.errors.push({ code: event.code, message: event.message });
      this.notify();
    });
  }

  /** Resolves when the condition holds (checked after each event or error); rejects after the timeout. */
  until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`condition not met after ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        check,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  close(): void {
    this.source.close();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.check()) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }
}
