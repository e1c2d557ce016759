import { RatchetError } from './ratchet-error.js';

/**
 * A step that waits (for a person's answer, child runs, a state key, a rate limit) and is to be parked until
 * `wakeAt`, or until what it waits for wakes it. It is thrown only to unwind code that cannot return it — a
 * tool handler awaiting `ctx.ask()`, a model call waiting for its rate limit — and each step kind catches it
 * at its own boundary and hands it to the runner as a `park` outcome (see `untilParked`). `recheck`, run once
 * the step is parked, says whether what it waits for came meanwhile (a wake-up that found the step still
 * running), and the step is then woken at once.
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
