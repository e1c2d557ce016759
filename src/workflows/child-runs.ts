import type { Redis } from 'ioredis';
import type { Message } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import { chatKey, type KeySpace, runKeys } from '../redis/keys.js';
import { planRunCreation } from './core/run-creation.js';
import { childRunId } from './ids.js';
import type { RunRecord, RunStatus } from './run-record.js';
import type { StepScheduler } from './step-scheduler.js';
import { execPipeline, parseRun } from './store.js';

export interface ChildTask {
  agent: string;
  /** The child's input, on a chat of its own. */
  task: string;
  /** A team member's turn instead: the chat it continues (its private chat) and its input messages. */
  turn?: { chatId?: string; messages: (childRunId: string) => Message[] };
}

/** Where one child run stands. */
export interface ChildState {
  agent: string;
  runId: string;
  status: RunStatus;
  result: string | null;
  error: string | null;
}

interface ChildRunsContext {
  redis: Redis;
  space: KeySpace;
  scheduler: Pick<StepScheduler, 'startChildRun'>;
  now: () => Date;
}

/**
 * Starts the children of one step job (once: their ids derive from the job, and a child that exists is left
 * as it is) and returns where each stands, in the order of the tasks. A child works on a chat of its own
 * holding its task, shares its tree root's run budget, and wakes `parentJobId` when it finishes.
 */
export async function ensureChildRuns(
  context: ChildRunsContext,
  input: {
    parent: RunRecord;
    parentJobId: string;
    /** The agents above the children, nearest first (see RunRecord.lineage). */
    lineage: readonly string[];
    tasks: readonly ChildTask[];
    prefixOf: (agent: string) => string;
    /** Whether an agent name is a team's (its run is a chain of team turns). */
    isTeam: (agent: string) => boolean;
  },
): Promise<ChildState[]> {
  const { parent } = input;
  const ids = input.tasks.map((_task, index) => childRunId(parent.session_id, input.parentJobId, index));
  let states = await readChildRuns(context, parent.session_id, ids, input.tasks);
  const missing = states.flatMap((state, index) => (state ? [] : [index]));
  if (missing.length === 0) return states as ChildState[];
  const parentKeys = runKeys(context.space, parent.session_id, parent.id);
  for (const index of missing) {
    const task = input.tasks[index] as ChildTask;
    const runId = ids[index] as string;
    const chatId = task.turn?.chatId ?? runId;
    const chatLength = task.turn
      ? await context.redis.llen(chatKey(context.space, parent.session_id, chatId))
      : 0;
    const plan = planRunCreation({
      sessionId: parent.session_id,
      runId,
      agent: task.agent,
      chatId,
      parts: [{ type: 'text', text: task.task }],
      ...(task.turn ? { messages: task.turn.messages(runId) } : {}),
      newSession: undefined,
      chatLength,
      now: context.now().toISOString(),
      prefix: input.prefixOf(task.agent),
      team: input.isTeam(task.agent),
      // The tree shares its root's run budget: every run's usage is summed on the root (RunKeys.treeUsage).
      ...withBudget(parent.budget),
      budgetRaises: parent.budget_raises,
      rootRunId: parent.root_run_id ?? parent.id,
      parent: { run_id: parent.id, job_id: input.parentJobId, depth: (parent.parent?.depth ?? 0) + 1 },
      lineage: [...input.lineage],
    });
    const { code, detail } = await context.scheduler.startChildRun({ plan, chatLength, parent: parentKeys });
    if (code === 'PARENT_FINISHED')
      throw new RatchetError('cancelled', `run ${parent.id} is ${detail}: no child run is started`);
    // CONFLICT: the private chat grew meanwhile, which only another execution of this step can do: read again.
    if (code === 'CONFLICT') throw new RatchetError('internal', `child run ${runId}: its chat changed`);
    if (code !== 'OK' && code !== 'RUN_EXISTS')
      throw new RatchetError('internal', `starting child run ${runId}: create-run returned ${code}`);
  }
  states = await readChildRuns(context, parent.session_id, ids, input.tasks);
  return states.map((state, index) => {
    if (!state) throw new RatchetError('internal', `child run ${ids[index]} was not recorded`);
    return state;
  });
}

async function readChildRuns(
  context: ChildRunsContext,
  sessionId: string,
  ids: readonly string[],
  tasks: readonly ChildTask[],
): Promise<(ChildState | undefined)[]> {
  const pipeline = context.redis.pipeline();
  for (const id of ids) pipeline.hmget(runKeys(context.space, sessionId, id).run, 'record', 'rev');
  const replies = (await execPipeline(pipeline)) as (string | null)[][];
  return replies.map(([record, rev], index) => {
    if (!record) return undefined;
    const run = parseRun(record, rev ?? null, `run ${ids[index]}`).record;
    return {
      agent: (tasks[index] as ChildTask).agent,
      runId: run.id,
      status: run.status,
      result: run.result,
      error: run.error ? run.error.message : null,
    };
  });
}

function withBudget(budget: RunRecord['budget']) {
  return budget ? { budget } : {};
}

/** Where the usage of a run's whole tree is summed: on its root run (its run budget covers the tree). */
export function treeUsageKeyOf(
  space: KeySpace,
  run: Pick<RunRecord, 'session_id' | 'id' | 'root_run_id'>,
): string {
  return runKeys(space, run.session_id, run.root_run_id ?? run.id).treeUsage;
}
