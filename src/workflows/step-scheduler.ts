import type { KeySpace } from '../redis/keys.js';
import type { StepQueues } from './step-queues.js';

/**
 * The narrow port through which steps move runs on: the step queues (add the next iteration, a reply's tool
 * calls, a team turn, a child run's first step; wake a parked step) and cancelling a run (the siblings of a
 * child that failed). Steps never see the client face of the engine (start, read, answer, delete).
 */
export interface StepScheduler {
  readonly space: KeySpace;
  readonly queues: StepQueues;
  /** Cancels a run and its children: its state, its queued steps, and a broadcast to every worker. */
  cancelRun(runId: string, reason: string): Promise<unknown>;
}
