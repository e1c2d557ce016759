import { RatchetError } from '../../errors/index.js';
import { type ChildState, type ChildTask, ensureChildRuns } from '../child-runs.js';
import { isFinished, type RunRecord } from '../run-record.js';
import { prefixOf } from './agent-runtime.js';
import type { StepContext } from './step-context.js';
import { suspendUntil } from './tool-interaction.js';

/** Where a step's children stand once it may go on. */
export type ChildOutcome =
  | { kind: 'done'; states: ChildState[] }
  /** One failed or was cancelled; the others, still running, were cancelled with a reason naming it. */
  | { kind: 'failed'; failed: ChildState; states: ChildState[] };

/**
 * The one way a step waits for child runs (a delegation, a team turn, a team or group in control of a
 * handoff group): starts them once (their ids derive from the step's job), and returns when all have
 * finished or one has failed. Otherwise the step is parked, holding no worker, until a child's end wakes it;
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
        queues: services.scheduler.queues,
        eventsMaxLength: services.eventsMaxLength,
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
  throw suspendUntil(
    services.now().getTime() + services.questionRecheckMs,
    `child runs ${running.join(', ')}`,
    async () => (await read()).filter((state) => isFinished(state.status)).length > finished,
  );
}
