import { RatchetError } from '../../errors/index.js';
import { runKeys } from '../../redis/keys.js';
import type { DelegatedTask, DelegationResult } from '../../tools/index.js';
import { type ChildState, ensureChildRuns } from '../child-runs.js';
import type { ToolJobData } from '../job-data.js';
import { isFinished } from '../run-record.js';
import { loadRun } from '../store.js';
import { isRunnable, prefixOf, runnableNames } from './agent-runtime.js';
import type { StepContext } from './step-context.js';
import { suspendUntil } from './tool-interaction.js';

/**
 * ToolContext.delegate for one execution of a tool handler. Refusals (unknown agent, itself, too deep) are
 * plain errors: the model gets them as an error result and can do the task another way.
 */
export function delegateFunction(
  context: StepContext,
  data: ToolJobData,
): (tasks: readonly DelegatedTask[]) => Promise<DelegationResult[]> {
  return async (tasks) => {
    const { services } = context;
    if (tasks.length === 0) throw new Error('tasks: give at least one task');
    for (const task of tasks) {
      if (task.agent === data.agent)
        throw new Error(`agent "${task.agent}" cannot delegate to itself: do the task yourself`);
      if (!isRunnable(services, task.agent)) {
        const known = runnableNames(services)
          .filter((name) => name !== data.agent)
          .join(', ');
        throw new Error(`unknown agent "${task.agent}" (agents you can delegate to: ${known})`);
      }
    }
    const stored = await loadRun(
      services.redis,
      runKeys(services.space, data.session_id, data.run_id),
      data.run_id,
    );
    if (!stored || isFinished(stored.record.status))
      throw new RatchetError('cancelled', `run ${data.run_id} is finished: no child run is started`);
    const parent = stored.record;
    const depth = (parent.parent?.depth ?? 0) + 1;
    if (depth > services.maxDelegationDepth) {
      throw new Error(
        `delegation refused: this run is already ${depth - 1} delegation(s) deep and max_delegation_depth ` +
          `is ${services.maxDelegationDepth}; do the task yourself`,
      );
    }
    const children = {
      redis: services.redis,
      space: services.space,
      queues: services.engine.queues,
      eventsMaxLength: services.eventsMaxLength,
      now: services.now,
    };
    const ensure = () =>
      ensureChildRuns(children, {
        parent,
        parentJobId: context.jobId,
        // The agent that delegates (a handoff group's member in control) passes its toolboxes on.
        lineage: [data.agent, ...parent.lineage],
        tasks,
        prefixOf: (agent) => prefixOf(services, agent),
        isTeam: (agent) => services.teams.has(agent),
      });
    let states = await ensure();
    const failed = states.find((state) => state.status === 'failed' || state.status === 'cancelled');
    if (failed) {
      for (const state of states.filter((candidate) => !isFinished(candidate.status))) {
        try {
          await services.engine.cancelRun(
            state.runId,
            `cancelled because child run ${failed.runId} (${failed.agent}) ${failed.status}`,
          );
        } catch (error) {
          if (!(error instanceof RatchetError && error.code === 'run_finished')) throw error;
        }
      }
      states = await ensure();
    }
    if (failed || states.every((state) => isFinished(state.status))) return states.map(resultOf);
    const finishedBefore = states.filter((state) => isFinished(state.status)).length;
    const running = states.filter((state) => !isFinished(state.status)).map((state) => state.runId);
    throw suspendUntil(
      services.now().getTime() + services.questionRecheckMs,
      `child runs ${running.join(', ')}`,
      async () => (await ensure()).filter((state) => isFinished(state.status)).length > finishedBefore,
    );
  };
}

function resultOf(state: ChildState): DelegationResult {
  return {
    agent: state.agent,
    run_id: state.runId,
    status: state.status === 'completed' ? 'completed' : state.status === 'failed' ? 'failed' : 'cancelled',
    answer: state.status === 'completed' ? state.result : null,
    error: state.status === 'completed' ? null : (state.error ?? `the run ended ${state.status}`),
  };
}
