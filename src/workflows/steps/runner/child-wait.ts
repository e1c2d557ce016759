import type { Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { type ResultMetadata, resultMetadataOf } from '../../core/result-metadata.js';
import { type DefinitionToRecord, planRunCreation, runDeadline } from '../../core/run-creation.js';
import { childRunId } from '../../ids.js';
import type { RunInheritance } from '../../job-data.js';
import { isFinished, type RunRecord, type RunStatus } from '../../run-record.js';
import { prefixOf } from './agent-runtime.js';
import { type Park, park } from './step-action.js';
import type { StepContext } from './step-context.js';

export interface ChildTask {
  agent: string;
  /** The child's input, on a chat of its own. */
  task: string;
  /** A team member's turn instead: the chat it continues (its private chat) and its input messages. */
  turn?: { chatId?: string; messages: (childRunId: string) => Message[] };
  /**
   * The agent as the parent's recorded definition has it (a pinned team's member, decision 0030): the
   * definition the child records, its display prefix and timeout. Absent: this worker's config's agent.
   */
  recorded?: { definition: DefinitionToRecord; prefix: string; timeoutS: number | undefined };
}

/** Where one child run stands. */
export interface ChildState {
  agent: string;
  runId: string;
  status: RunStatus;
  result: string | null;
  error: string | null;
  /** What the child's result says about itself (time, iterations, tool calls, tokens, cost). */
  metadata: ResultMetadata;
}

/**
 * Starts the children of one step job (once: their ids derive from the job, and a child that exists is left
 * as it is) and returns where each stands, in the order of the tasks. A child works on a chat of its own
 * holding its task, shares its tree root's run budget, and wakes `parentJobId` when it finishes.
 */
async function ensureChildRuns(
  context: StepContext,
  input: {
    parent: RunRecord;
    parentJobId: string;
    /** The agents above the children, nearest first (see RunRecord.lineage). */
    lineage: readonly string[];
    /** What the children inherit (decision 0047); undefined: their workers' config decides. */
    inherited: RunInheritance | undefined;
    tasks: readonly ChildTask[];
    prefixOf: (agent: string) => string;
    /** Whether an agent name is a team's (its run is a chain of team turns). */
    isTeam: (agent: string) => boolean;
  },
): Promise<ChildState[]> {
  const { parent } = input;
  const ids = input.tasks.map((_task, index) => childRunId(parent.session_id, input.parentJobId, index));
  let states = await readChildRuns(context, ids, input.tasks);
  const missing = states.flatMap((state, index) => (state ? [] : [index]));
  if (missing.length === 0) return states as ChildState[];
  for (const index of missing) {
    const task = input.tasks[index] as ChildTask;
    const runId = ids[index] as string;
    const chatId = task.turn?.chatId ?? runId;
    const chatLength = task.turn ? await context.store.chatLength(chatId) : 0;
    const plan = planRunCreation({
      sessionId: parent.session_id,
      runId,
      agent: task.agent,
      chatId,
      parts: [{ type: 'text', text: task.task }],
      ...(task.turn ? { messages: task.turn.messages(runId) } : {}),
      newSession: undefined,
      chatLength,
      now: context.services.now().toISOString(),
      prefix: task.recorded?.prefix ?? input.prefixOf(task.agent),
      team: input.isTeam(task.agent),
      // The child works under its agent's definition as its parent's definition recorded it, or as this
      // worker's config has it now (decision 0030).
      ...(task.recorded ? { definition: task.recorded.definition } : currentDefinition(context, task.agent)),
      // The tree shares its root's run budget: every run's usage is summed on the root too.
      ...withBudget(parent.budget),
      budgetRaises: parent.budget_raises,
      rootRunId: parent.root_run_id ?? parent.id,
      parent: { run_id: parent.id, job_id: input.parentJobId, depth: (parent.parent?.depth ?? 0) + 1 },
      lineage: [...input.lineage],
      ...(input.inherited ? { inherited: input.inherited } : {}),
      // A child run counts against its root's tenant, at its root's priority (decision 0035).
      tenant: parent.tenant,
      priority: parent.priority,
      // Its own agent's (or team's) timeout from now, or its parent's deadline when that is sooner.
      deadlineAt: runDeadline(
        context.services.now(),
        task.recorded
          ? task.recorded.timeoutS
          : (context.services.agents.get(task.agent)?.timeoutS ??
              context.services.teams.get(task.agent)?.timeoutS),
        parent.deadline_at,
      ),
    });
    const { code, detail } = await context.services.scheduler.startChildRun({
      plan,
      chatLength,
      parentRunId: parent.id,
    });
    if (code === 'PARENT_FINISHED')
      throw new RatchetError('cancelled', `run ${parent.id} is ${detail}: no child run is started`);
    // CONFLICT: the private chat grew meanwhile, which only another execution of this step can do: read again.
    if (code === 'CONFLICT') throw new RatchetError('internal', `child run ${runId}: its chat changed`);
    if (code !== 'OK' && code !== 'RUN_EXISTS')
      throw new RatchetError('internal', `starting child run ${runId}: create-run returned ${code}`);
  }
  states = await readChildRuns(context, ids, input.tasks);
  return states.map((state, index) => {
    if (!state) throw new RatchetError('internal', `child run ${ids[index]} was not recorded`);
    return state;
  });
}

/** Where each child run stands (undefined: not created yet), in the order of the tasks. */
async function readChildRuns(
  context: StepContext,
  ids: readonly string[],
  tasks: readonly ChildTask[],
): Promise<(ChildState | undefined)[]> {
  const runs = await context.store.loadRuns(ids);
  return runs.map((stored, index) => {
    if (!stored) return undefined;
    const run = stored.record;
    return {
      agent: (tasks[index] as ChildTask).agent,
      runId: run.id,
      status: run.status,
      result: run.result,
      error: run.error ? run.error.message : null,
      metadata: resultMetadataOf(run, context.services.now().toISOString()),
    };
  });
}

function withBudget(budget: RunRecord['budget']) {
  return budget ? { budget } : {};
}

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
  input: {
    parent: RunRecord;
    lineage: readonly string[];
    /** What the step's own run inherited (its job data's), which its children inherit in turn. */
    inherited: RunInheritance | undefined;
    tasks: readonly ChildTask[];
  },
): Promise<ChildOutcome> {
  const { services } = context;
  const inherited = childInheritance(input.parent, input.inherited, input.lineage);
  const read = () =>
    ensureChildRuns(context, {
      parent: input.parent,
      parentJobId: context.jobId,
      lineage: input.lineage,
      inherited,
      tasks: input.tasks,
      prefixOf: (agent) => prefixOf(services, agent),
      isTeam: (agent) => services.teams.has(agent),
    });
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

/**
 * What children whose lineage is `lineage` inherit from a run that inherited `from` (decision 0047): its
 * `options.delegate` default, and for a delegation (the delegating agent above the run's own ancestors) the
 * definition the run works under now above the definitions it inherited. Undefined when the run recorded
 * none (started before this was): the children take both from their workers' config, as it does.
 */
function childInheritance(
  parent: RunRecord,
  from: RunInheritance | undefined,
  lineage: readonly string[],
): RunInheritance | undefined {
  if (!from) return undefined;
  const { delegate_default } = from;
  // A team's members and a handoff group's member in control inherit no toolboxes.
  if (lineage.length === 0) return { lineage: [], delegate_default };
  if (!parent.definition || lineage.length !== from.lineage.length + 1) return undefined;
  return { lineage: [parent.definition.hash, ...from.lineage], delegate_default };
}

/** What a new child run of the agent records as its definition: this worker's current one, if it has one. */
function currentDefinition(context: StepContext, agent: string): { definition?: DefinitionToRecord } {
  const current = context.services.definitions?.current(agent);
  return current ? { definition: { hash: current.hash, text: current.text } } : {};
}
