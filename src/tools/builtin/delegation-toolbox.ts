import { z } from 'zod';
import type { DelegationResult, JsonValue } from '../tool.js';
import { defineTool } from '../tool.js';
import { createToolBox, type ToolBox } from '../toolbox.js';

export const delegationToolboxName = 'delegation';

/** An agent another agent may delegate to. */
export interface RegistryEntry {
  name: string;
  description: string;
}

const taskSchema = z.strictObject({
  agent: z.string().min(1).describe('the name of the agent (see list_agents)'),
  task: z.string().min(1).describe('everything the agent needs to know to do the task'),
  sub_goal: z
    .string()
    .optional()
    .describe('supervisors: the id of the sub-goal this task works on (its outcome moves the sub-goal)'),
  thread: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[\w.-]+$/, { error: 'a thread name is letters, digits, "_", "-" and "."' })
    .optional()
    .describe(
      'a name for this conversation with the agent: later delegations with the same thread continue it, ' +
        'and the agent remembers what was said (default: a fresh conversation)',
    ),
  continue: z
    .boolean()
    .optional()
    .describe('true: continue your default thread with this agent (as thread "default")'),
});

/** The thread `continue: true` continues when no thread is named. */
export const defaultThread = 'default';

/** The task as the child run gets it (the sub-goal is the parent's bookkeeping). */
function childTask(task: z.infer<typeof taskSchema>) {
  const thread = task.thread ?? (task.continue === true ? defaultThread : undefined);
  return { agent: task.agent, task: task.task, ...(thread === undefined ? {} : { thread }) };
}

function failureReport(results: readonly DelegationResult[]): string {
  return results
    .map((result, index) => {
      const outcome = result.status === 'completed' ? 'completed' : `${result.status}: ${result.error}`;
      return `task ${index + 1} (${result.agent}, run ${result.run_id}): ${outcome}`;
    })
    .join('\n');
}

/**
 * `list_agents`, `delegate_to_agent` and `spawn_agents`: each delegation is a child run of its own, and the
 * call's result is the child's final answer. The tools start their children once (see ToolContext.delegate),
 * so they may run again after a crash.
 */
export function delegationToolbox(registry: readonly RegistryEntry[]): ToolBox {
  const listAgents = defineTool({
    name: 'list_agents',
    description: 'Lists the agents you can delegate tasks to, with what each one does.',
    inputSchema: z.strictObject({}),
    idempotent: true,
    handler: async (context) =>
      registry
        .filter((entry) => entry.name !== context.agent)
        .map((entry) => ({ name: entry.name, description: entry.description })),
  });
  const delegateToAgent = defineTool({
    name: 'delegate_to_agent',
    description:
      'Gives a task to another agent, which works on it on its own and returns its final answer. ' +
      'The agent sees only the task (include everything it needs), unless you continue a conversation with ' +
      'it: name a thread (or continue: true) on the first delegation and the later ones, and it keeps its ' +
      'history of that thread.',
    inputSchema: taskSchema,
    idempotent: true,
    handler: async (context, input) => {
      const [result] = await context.delegate([childTask(input)]);
      if (!result) throw new Error('the delegation returned nothing');
      if (result.status !== 'completed') {
        const goal =
          input.sub_goal === undefined
            ? ''
            : `\nSub-goal "${input.sub_goal}" failed: retry it (delegate it again), re-plan (declare_sub_goals) or give up.`;
        throw new Error(
          `agent "${result.agent}" (run ${result.run_id}) ${result.status}: ${result.error}${goal}`,
        );
      }
      return result.answer ?? '';
    },
  });
  const spawnAgents = defineTool({
    name: 'spawn_agents',
    description:
      'Gives several tasks to agents that work on them at the same time; returns their answers in the ' +
      'order given. If one fails, the others are stopped.',
    inputSchema: z.strictObject({
      tasks: z.array(taskSchema).min(1).max(20).describe('the tasks, each with the agent that does it'),
    }),
    idempotent: true,
    handler: async (context, input) => {
      const results = await context.delegate(input.tasks.map(childTask));
      if (results.some((result) => result.status !== 'completed')) {
        const goals = input.tasks.flatMap((task, index) =>
          task.sub_goal !== undefined && results[index]?.status !== 'completed' ? [`"${task.sub_goal}"`] : [],
        );
        const hint =
          goals.length === 0
            ? ''
            : `\nSub-goal(s) ${goals.join(', ')} failed: retry them (delegate again), re-plan (declare_sub_goals) or give up.`;
        throw new Error(`not every task completed:\n${failureReport(results)}${hint}`);
      }
      // What each run cost, as the model reads it: without its wall-clock time, so that a run resumed after a
      // crash reads (and is sent) exactly what an uninterrupted one would.
      return results.map((result) => {
        const { execution_time_ms: _time, ...metadata } = result.metadata;
        return { agent: result.agent, answer: result.answer ?? '', metadata: metadata as JsonValue };
      });
    },
  });
  return createToolBox(delegationToolboxName, [listAgents, delegateToAgent, spawnAgents]);
}
