import { RatchetError } from './ratchet-error.js';

/**
 * A tool handler that waits (for a person's answer, child runs, a state key) and is to be parked until
 * `wakeAt`, or until what it waits for wakes it. A step decides to wait as data (a `park` StepAction); this
 * error exists only to unwind a handler awaiting `ctx.ask()`, `ctx.delegate()` or `ctx.session.park()`,
 * which cannot return it: the tool step catches it at the handler's boundary and returns the park. `recheck`,
 * run once the step is parked, says whether what it waits for came meanwhile (a wake-up that found the step
 * still running), and the step is then woken at once.
 */
export class Suspension extends RatchetError {
  readonly wakeAt: number;
  readonly recheck: (() => Promise<boolean>) | undefined;

  constructor(wakeAt: number, waitingFor: string, recheck?: () => Promise<boolean>) {
    super('suspended', `waiting for ${waitingFor}`, { details: { wake_at: wakeAt } });
    this.name = 'Suspension';
    this.wakeAt = wakeAt;
    this.recheck = recheck;
  }
}
