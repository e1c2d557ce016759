import { RatchetError } from '../../errors/index.js';
import { type ChildState, type ChildTask, ensureChildRuns } from '../child-runs.js';
import { isFinished, type RunRecord } from '../run-record.js';
import { prefixOf } from './agent-runtime.js';
import { type Park, park } from './step-action.js';
import type { StepContext } from './step-context.js';

/** Where a step's children stand once it may go on. */
export type ChildOutcome =
  | { kind: 'done'; states: ChildState[] }
  /** One failed or was cancelled; the others, still running, were cancelled with a reason naming it. */
  | { kind: 'failed'; failed: ChildState; states: ChildState[] }
  /** Some still run: the step parks until a child's end wakes it. */
  | { kind: 'waiting'; running: string[]; park: Park };

/**
 * The one way a step waits for child runs (a delegation, a team turn, a team or group in control of a
 * handoff group): starts them once (their ids derive from the step's job), and returns when all have
 * finished or one has failed. Otherwise the step is to park, holding no worker, until a child's end wakes it;
 * the recheck right after parking catches a child that finished while the step was still looking.
 */
export async function awaitChildRuns(
  context: StepContext,
  input: { parent: RunRecord; lineage: readonly string[]; tasks: readonly ChildTask[] },
): Promise<ChildOutcome> {
  const { services } = context;
  const read = () =>
    ensureChildRuns(
      {
        redis: services.redis,
        space: services.space,
        scheduler: services.scheduler,
        now: services.now,
      },
      {
        parent: input.parent,
        parentJobId: context.jobId,
        lineage: input.lineage,
        tasks: input.tasks,
        prefixOf: (agent) => prefixOf(services, agent),
        isTeam: (agent) => services.teams.has(agent),
      },
    );
  const states = await read();
  const failed = states.find((state) => state.status === 'failed' || state.status === 'cancelled');
  if (failed) {
    for (const state of states.filter((candidate) => !isFinished(candidate.status))) {
      try {
        await services.scheduler.cancelRun(
          state.runId,
          `cancelled because child run ${failed.runId} (${failed.agent}) ${failed.status}`,
        );
      } catch (error) {
        if (!(error instanceof RatchetError && ['run_finished', 'run_not_found'].includes(error.code)))
          throw error;
      }
    }
    return { kind: 'failed', failed, states: await read() };
  }
  const finished = states.filter((state) => isFinished(state.status)).length;
  if (finished === states.length) return { kind: 'done', states };
  const running = states.filter((state) => !isFinished(state.status)).map((state) => state.runId);
  return {
    kind: 'waiting',
    running,
    park: park(
      services.now().getTime() + services.questionRecheckMs,
      async () => (await read()).filter((state) => isFinished(state.status)).length > finished,
    ),
  };
}
