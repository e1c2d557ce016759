import type { z } from 'zod';
import type { RatchetError } from '../../errors/index.js';
import type { StepContext } from './step-context.js';
import type { StepOutcome } from './step-outcome.js';

/**
 * A step kind says how its jobs execute and what a final failure means. The worker looks kinds up by job
 * name in one table and runs them through one lifecycle (src/worker/process-step.ts).
 */
export interface StepKind<Data> {
  name: string;
  dataSchema: z.ZodType<Data>;
  /** Log fields for every line about this step. */
  describe(data: Data): Record<string, unknown>;
  /** Runs the step; a step that waits says so (`park`) instead of throwing. */
  execute(context: StepContext, data: Data): Promise<StepOutcome>;
  /** The step failed for good (a permanent error, or attempts used up): leave the run in a sound state. */
  fail(context: StepContext, data: Data, error: RatchetError): Promise<void>;
  /** Announces a failed attempt (an `error` event); best effort. */
  announceFailure(
    context: StepContext,
    data: Data,
    error: RatchetError,
    retryInMs: number | null,
  ): Promise<void>;
}
