/**
 * How much of what pages load a worker holds at once. Every response a page loads passes through the worker
 * whole (Playwright hands Chromium a body in one message, base64-encoded), so each body in flight costs the
 * worker several times its size until Chromium has it. Two bounds keep that finite whatever a page does:
 * requests in flight per page (RequestSlots) and bytes in flight per worker (BytesInFlight).
 */

/** A refusal by one of the bounds: the request fails in the page and is reported to the model. */
export class LoadLimitError extends Error {
  override name = 'LoadLimitError';
}

interface Waiter {
  bytes: number;
  grant(): void;
  refuse(error: Error): void;
}

/** Bytes of one body held in the worker; `release` gives them back (once, when Chromium has the body). */
export interface BodyHold {
  /**
   * Holds `total` bytes for this body, as it arrives: undefined when they are held already, else a promise
   * that resolves once they are (or rejects when the worker cannot hold them).
   */
  grow(total: number, signal: AbortSignal): Promise<void> | undefined;
  release(): void;
}

/**
 * The worker's bytes in flight, shared by all its pages: a request reserves a first slice before it is sent,
 * and its body grows the reservation as it arrives (waiting while the worker holds `capacity`). Bodies that grow are served before new ones, and when every body holding bytes is
 * waiting to grow (none will finish and give any back), the newest is refused instead of waiting for ever.
 */
export class BytesInFlight {
  private readonly capacity: number;
  private readonly setting: string;
  private used = 0;
  private holders = 0;
  private readonly growing: Waiter[] = [];
  private readonly starting: Waiter[] = [];

  constructor(options: { capacity: number; setting: string }) {
    this.capacity = options.capacity;
    this.setting = options.setting;
  }

  /** Bytes held now (for tests and metrics). */
  get held(): number {
    return this.used;
  }

  /** Reserves `bytes` (at most the capacity) for a new body, waiting for room. */
  async hold(bytes: number, signal: AbortSignal): Promise<BodyHold> {
    let held = 0;
    let released = false;
    const add = (more: number) => {
      if (released) this.giveBack(more, false);
      else held += more;
    };
    await this.take(Math.min(bytes, this.capacity), false, signal, add);
    this.holders += 1;
    return {
      grow: (total, growSignal) => {
        if (total > this.capacity) {
          return Promise.reject(
            new LoadLimitError(
              `a response of more than ${this.capacity} bytes cannot be held (${this.setting})`,
            ),
          );
        }
        if (released || total <= held) return undefined;
        // Doubling keeps a growing body from asking once per chunk.
        const wanted = Math.min(Math.max(total, 2 * held), this.capacity);
        return this.take(wanted - held, true, growSignal, add);
      },
      release: () => {
        if (released) return;
        released = true;
        this.giveBack(held, true);
        held = 0;
      },
    };
  }

  private giveBack(bytes: number, holder: boolean): void {
    this.used -= bytes;
    if (holder) this.holders -= 1;
    this.drain();
  }

  /** Takes `bytes` now or when room comes (growing bodies first); `granted` runs as they are counted. */
  private take(
    bytes: number,
    holding: boolean,
    signal: AbortSignal,
    granted: (bytes: number) => void,
  ): Promise<void> {
    signal.throwIfAborted();
    const queue = holding ? this.growing : this.starting;
    if (this.growing.length === 0 && (holding || this.starting.length === 0) && this.fits(bytes)) {
      this.used += bytes;
      granted(bytes);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        remove(queue, waiter);
        reject(signal.reason);
        this.drain();
      };
      const waiter: Waiter = {
        bytes,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          granted(bytes);
          resolve();
        },
        refuse: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
      this.drain();
    });
  }

  private fits(bytes: number): boolean {
    return this.used + bytes <= this.capacity;
  }

  private drain(): void {
    for (const queue of [this.growing, this.starting]) {
      for (let next = queue[0]; next !== undefined && this.fits(next.bytes); next = queue[0]) {
        queue.shift();
        this.used += next.bytes;
        next.grant();
      }
      if (queue.length > 0) break;
    }
    // Every body holding bytes waits to grow: nothing will be given back, so the newest gives up (once it
    // has released what it holds, this is checked again).
    if (this.growing.length > 0 && this.growing.length >= this.holders) {
      const newest = this.growing.pop() as Waiter;
      newest.refuse(
        new LoadLimitError(
          `the pages of this worker hold ${this.used} bytes of responses in flight, the most ` +
            `${this.setting} allows: this response was not loaded`,
        ),
      );
    }
  }
}

/** At most `capacity` requests of one page in flight; the others wait their turn (in order). */
export class RequestSlots {
  private readonly capacity: number;
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Waits for a slot; the returned function gives it back (once). */
  async acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.used < this.capacity && this.waiting.length === 0) this.used += 1;
    else {
      await new Promise<void>((resolve, reject) => {
        const granted = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          remove(this.waiting, granted);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(granted);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.used -= 1;
    };
  }
}

function remove<T>(list: T[], item: T): void {
  const index = list.indexOf(item);
  if (index >= 0) list.splice(index, 1);
}

/**
 * Whether a page is in a browser call. Between calls a page loads nothing: its requests are refused and its
 * WebSockets' servers are paused until the next call opens the gate.
 */
export class CallGate {
  private calls = 0;
  private opened: { promise: Promise<void>; resolve: () => void } | undefined;

  get open(): boolean {
    return this.calls > 0;
  }

  enter(): void {
    this.calls += 1;
    this.opened?.resolve();
    this.opened = undefined;
  }

  leave(): void {
    this.calls = Math.max(0, this.calls - 1);
  }

  /** Resolves when the page is next in a call (at once when it is). */
  whenOpen(): Promise<void> {
    if (this.open) return Promise.resolve();
    if (!this.opened) {
      let resolve = () => {};
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      this.opened = { promise, resolve };
    }
    return this.opened.promise;
  }
}
