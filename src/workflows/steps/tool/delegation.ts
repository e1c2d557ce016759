import { RatchetError } from '../../../errors/index.js';
import type { DelegatedTask, DelegationResult } from '../../../tools/index.js';
import { childRunId, messageId } from '../../ids.js';
import type { ToolJobData } from '../../job-data.js';
import { isFinished } from '../../run-record.js';
import { threadChatId } from '../../thread-chats.js';
import { isRunnable, runnableNames } from '../runner/agent-runtime.js';
import { awaitChildRuns, type ChildState, type ChildTask } from '../runner/child-wait.js';
import type { StepContext } from '../runner/step-context.js';
import { suspensionOf } from './tool-interaction.js';

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
    }
    const unknown = tasks.flatMap((task, index) => (isRunnable(services, task.agent) ? [] : [index]));
    if (unknown.length > 0) {
      // A child an earlier execution of this call started is waited for, not refused: it works under its own
      // recorded definition (decision 0030), though this worker's config no longer has its name (a deploy).
      const started = await context.store.loadRuns(
        unknown.map((index) => childRunId(data.session_id, context.jobId, index)),
      );
      const missing = unknown.find((_, position) => started[position] === undefined);
      if (missing !== undefined) {
        const known = runnableNames(services)
          .filter((name) => name !== data.agent)
          .join(', ');
        throw new Error(`unknown agent "${tasks[missing]?.agent}" (agents you can delegate to: ${known})`);
      }
    }
    const stored = await context.store.loadRun();
    if (!stored || isFinished(stored.record.status))
      throw new RatchetError('cancelled', `run ${data.run_id} is finished: no child run is started`);
    const parent = stored.record;
    const depth = (parent.parent?.depth ?? 0) + 1;
    const own = services.agents.get(data.agent)?.maxDelegationDepth;
    const limit = Math.min(services.maxDelegationDepth, own ?? Number.POSITIVE_INFINITY);
    if (depth > limit) {
      const which =
        own !== undefined && own < services.maxDelegationDepth
          ? `agent "${data.agent}" has max_delegation_depth ${own}`
          : `max_delegation_depth is ${services.maxDelegationDepth}`;
      throw new Error(
        `delegation refused: this run is already ${depth - 1} delegation(s) deep and ${which}; do the task yourself`,
      );
    }
    const children = await childTasks(context, tasks, parent.session_id);
    // The agent that delegates (a handoff group's member in control) passes its toolboxes on.
    const outcome = await awaitChildRuns(context, {
      parent,
      lineage: [data.agent, ...parent.lineage],
      inherited: data.inherited,
      tasks: children,
    });
    if (outcome.kind === 'waiting')
      throw suspensionOf(outcome.park, `child runs ${outcome.running.join(', ')}`);
    return outcome.states.map(resultOf);
  };
}

/**
 * The child tasks of a delegation: a task with a `thread` continues the thread's chat (its history included),
 * one run at a time; any other gets a fresh chat. The thread's run is noted before the child is created, so
 * its chat is found (and deleted) with the session whatever happens next.
 */
async function childTasks(
  context: StepContext,
  tasks: readonly DelegatedTask[],
  sessionId: string,
): Promise<ChildTask[]> {
  const threads = tasks.map((task) =>
    task.thread === undefined ? undefined : threadChatId(task.agent, task.thread),
  );
  const seen = new Set<string>();
  for (const [index, chatId] of threads.entries()) {
    if (chatId === undefined) continue;
    if (!context.services.agents.has(tasks[index]?.agent ?? ''))
      throw new Error(
        `thread: "${tasks[index]?.agent}" is a team or handoff group; only an agent keeps a thread (leave thread out)`,
      );
    if (seen.has(chatId))
      throw new Error(
        `tasks: two tasks continue thread "${tasks[index]?.thread}" of agent "${tasks[index]?.agent}" at once; give them one after the other`,
      );
    seen.add(chatId);
  }
  return Promise.all(
    tasks.map(async (task, index): Promise<ChildTask> => {
      const chatId = threads[index];
      if (chatId === undefined) return { agent: task.agent, task: task.task };
      const runId = childRunId(sessionId, context.jobId, index);
      const latest = await context.store.threadRun(chatId);
      if (latest !== null && latest !== runId) {
        const [busy] = await context.store.loadRuns([latest]);
        if (busy && !isFinished(busy.record.status))
          throw new Error(
            `thread "${task.thread}" of agent "${task.agent}" is busy (run ${latest} works on it); wait for it or use another thread`,
          );
      }
      await context.store.recordThreadRun(chatId, runId);
      const now = context.services.now().toISOString();
      return {
        agent: task.agent,
        task: task.task,
        turn: {
          chatId,
          messages: (child) => [
            {
              id: messageId.input(child),
              sender: 'user',
              role: 'user',
              parts: [{ type: 'text', text: task.task }],
              metadata: {},
              created_at: now,
            },
          ],
        },
      };
    }),
  );
}

function resultOf(state: ChildState): DelegationResult {
  return {
    agent: state.agent,
    run_id: state.runId,
    status: state.status === 'completed' ? 'completed' : state.status === 'failed' ? 'failed' : 'cancelled',
    answer: state.status === 'completed' ? state.result : null,
    error: state.status === 'completed' ? null : (state.error ?? `the run ended ${state.status}`),
    metadata: state.metadata,
  };
}
