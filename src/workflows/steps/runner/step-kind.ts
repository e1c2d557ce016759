import type { z } from 'zod';
import type { RatchetError } from '../../../errors/index.js';
import type { RunInheritance } from '../../job-data.js';
import { announceAttemptFailure, failRun } from './run-failures.js';
import type { StepAction } from './step-action.js';
import type { StepContext } from './step-context.js';

/**
 * A step kind says how its jobs execute and what a final failure means, as decisions (StepAction) that the
 * one runner carries out (step-runner.ts). The worker looks kinds up by job name in one table.
 */
export interface StepKind<Data> {
  name: string;
  dataSchema: z.ZodType<Data>;
  /** Log fields for every line about this step. */
  describe(data: Data): Record<string, unknown>;
  /** Runs the step: what it decides to commit, add or wait for. */
  execute(context: StepContext, data: Data): Promise<StepAction>;
  /** The step failed for good (a permanent error, or attempts used up): leave the run in a sound state. */
  fail(context: StepContext, data: Data, error: RatchetError): Promise<StepAction>;
  /** Announces a failed attempt (an `error` event); best effort. */
  announceFailure(
    context: StepContext,
    data: Data,
    error: RatchetError,
    retryInMs: number | null,
  ): Promise<StepAction>;
}

/**
 * A step kind from what is its own: its body, the label of its failed attempts' `error` events, and what a
 * final failure means (by default the run fails with the error recorded).
 */
export function defineStepKind<
  Data extends {
    session_id: string;
    run_id: string;
    definition?: string | undefined;
    inherited?: RunInheritance | undefined;
  },
>(definition: {
  name: string;
  dataSchema: z.ZodType<Data>;
  describe(data: Data): Record<string, unknown>;
  /** How its `error` events name the step, e.g. `iteration 3`. */
  label(data: Data): string;
  run(context: StepContext, data: Data): Promise<StepAction>;
  fail?(context: StepContext, data: Data, error: RatchetError): Promise<StepAction>;
}): StepKind<Data> {
  const { label } = definition;
  return {
    name: definition.name,
    dataSchema: definition.dataSchema,
    describe: (data) => ({ run_id: data.run_id, session_id: data.session_id, ...definition.describe(data) }),
    execute: async (context, data) => {
      // The run's recorded definition, read once per hash and process (decision 0030): the steps resolve
      // their agent from it synchronously.
      const { definitions } = context.services;
      if (definitions) {
        // And those of the agents above a child run, whose toolboxes it inherits (decision 0047): a worker
        // reads each once, like the run's own.
        for (const hash of [data.definition, ...(data.inherited?.lineage ?? [])])
          if (hash !== undefined) await definitions.prepare(hash);
      }
      return definition.run(context, data);
    },
    fail: definition.fail ?? ((context, data, error) => failRun(context, data, error)),
    announceFailure: (context, data, error, retryInMs) =>
      announceAttemptFailure(context, { ...data, step: label(data) }, error, retryInMs),
  };
}
