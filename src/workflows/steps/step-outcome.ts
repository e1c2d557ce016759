import { Suspension } from '../../errors/index.js';

/** How one execution of a step ended, for the runner to act on (src/worker/process-step.ts). */
export type StepOutcome =
  /** The step did what it had to; its commits and the steps it added are in Redis. */
  | { kind: 'done' }
  /** The step waits: park it (no worker held) until `wakeAt`, or until what it waits for wakes it. */
  | { kind: 'park'; wakeAt: number; recheck: (() => Promise<boolean>) | undefined };

/**
 * Runs a step's body and says how it ended: a Suspension thrown from inside it (a tool handler waiting for an
 * answer, a model call for its rate limit, a turn for its members) becomes the `park` outcome, so the runner
 * receives data, never control flow.
 */
export function untilParked(body: () => Promise<void>): Promise<StepOutcome> {
  // Without an async frame of its own: this wraps every step execution.
  return body().then(() => done, parkedOrThrown);
}

const done: StepOutcome = { kind: 'done' };

function parkedOrThrown(error: unknown): StepOutcome {
  if (error instanceof Suspension) return { kind: 'park', wakeAt: error.wakeAt, recheck: error.recheck };
  throw error;
}
