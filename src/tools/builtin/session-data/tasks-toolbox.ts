import { z } from 'zod';
import { defineTool, type ToolContext } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { actorOf, sessionDataLimits } from './session-data.js';
import { parseTask, type TaskRecord, taskStatuses, taskView } from './task-record.js';

const taskId = z.string().regex(/^\d+$/, { error: 'a task id is a number as text, like "3"' });

function describeOwner(task: TaskRecord, context: ToolContext): string {
  if (!task.assignee) return 'nobody';
  if (task.assignee.run_id === context.runId) return `this run (agent "${task.assignee.agent}")`;
  return `agent "${task.assignee.agent}" (run ${task.assignee.run_id})`;
}

const taskCreate = defineTool({
  name: 'task_create',
  description: "Adds a pending task to the session's shared task board; returns its id.",
  inputSchema: z.strictObject({
    title: z.string().min(1).max(500).describe('what is to be done, in a line'),
    description: z.string().max(sessionDataLimits.valueChars).default('').describe('details'),
  }),
  // The call's idempotency key finds the task it created: a retried call creates nothing new.
  idempotent: true,
  handler: async (context, input) => {
    const now = context.session.now().toISOString();
    const actor = actorOf(context);
    const draft: Omit<TaskRecord, 'id'> = {
      v: 1,
      title: input.title,
      description: input.description,
      status: 'pending',
      assignee: null,
      claim_key: null,
      note: null,
      created_by: actor,
      updated_by: null,
      update_key: null,
      created_at: now,
      updated_at: now,
    };
    const created = await context.session.data.createTask(
      context.idempotencyKey,
      JSON.stringify(draft),
      sessionDataLimits.tasks,
    );
    if (created.kind === 'full') {
      throw new Error(`the task board holds ${created.tasks} tasks, the most it may: no task can be added`);
    }
    return { created: true, task: taskView(parseTask(created.json, `task ${created.id}`)) };
  },
});

const taskList = defineTool({
  name: 'task_list',
  description: "Lists the tasks of the session's shared task board, optionally only those with one status.",
  inputSchema: z.strictObject({
    status: z.enum(taskStatuses).optional().describe('only tasks with this status'),
  }),
  idempotent: true,
  handler: async (context, input) => {
    const stored = await context.session.data.allTasks();
    const tasks = Object.entries(stored)
      .map(([id, text]) => parseTask(text, `task ${id}`))
      .filter((task) => input.status === undefined || task.status === input.status)
      .sort((a, b) => Number(a.id) - Number(b.id));
    return { tasks: tasks.map(taskView) };
  },
});

const taskClaim = defineTool({
  name: 'task_claim',
  description:
    'Claims a pending task for yourself (it becomes in_progress); fails when someone else claimed it first.',
  inputSchema: z.strictObject({ id: taskId.describe('the task id') }),
  // A claim is keyed by the call's idempotency key: the same call running again finds its own claim.
  idempotent: true,
  handler: async (context, input) => {
    const claim = await context.session.data.claimTask({
      id: input.id,
      callKey: context.idempotencyKey,
      actorJson: JSON.stringify(actorOf(context)),
      now: context.session.now().toISOString(),
    });
    if (claim.kind === 'not_found')
      throw new Error(`no task with id "${input.id}": task_list shows the tasks`);
    const task = parseTask(claim.json, `task ${input.id}`);
    if (claim.kind === 'taken') {
      throw new Error(`task ${input.id} is already claimed by ${describeOwner(task, context)}`);
    }
    if (claim.kind === 'not_pending') {
      throw new Error(`task ${input.id} is ${task.status}: only a pending task can be claimed`);
    }
    return { claimed: true, task: taskView(task) };
  },
});

const taskUpdate = defineTool({
  name: 'task_update',
  description:
    'Sets the status of a task, with a note (what was done, or why it failed). A task you claimed stays ' +
    'yours; "pending" gives it back to the board.',
  inputSchema: z.strictObject({
    id: taskId.describe('the task id'),
    status: z.enum(taskStatuses).describe('the new status'),
    note: z.string().max(sessionDataLimits.valueChars).optional().describe('what happened'),
  }),
  idempotent: true,
  handler: async (context, input) => {
    const update = await context.session.data.updateTask({
      id: input.id,
      status: input.status,
      note: input.note ?? '',
      actorJson: JSON.stringify(actorOf(context)),
      runId: context.runId,
      callKey: context.idempotencyKey,
      now: context.session.now().toISOString(),
    });
    if (update.kind === 'not_found')
      throw new Error(`no task with id "${input.id}": task_list shows the tasks`);
    const task = parseTask(update.json, `task ${input.id}`);
    if (update.kind === 'not_yours') {
      throw new Error(
        `task ${input.id} is claimed by ${describeOwner(task, context)}: only they may update it`,
      );
    }
    if (update.kind === 'not_claimed') {
      throw new Error(`status "in_progress" comes from claiming: call task_claim with id "${input.id}"`);
    }
    return { updated: true, task: taskView(task) };
  },
});

/** `tasks`: a task board shared by the agents of one session (create, list, claim, update). */
export function tasksToolbox(): ToolBox {
  return createToolBox('tasks', [taskCreate, taskList, taskClaim, taskUpdate]);
}
