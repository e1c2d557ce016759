import { z } from 'zod';
import type { Message, ToolCallPart } from '../../chat/index.js';
import type { SubGoal, SubGoalStatus } from '../run-record.js';
import { clipText } from './effects/clip-text.js';

/**
 * A supervisor's sub-goals (agents[].options.supervisor), as pure functions of what is recorded: the calls
 * of a reply move them (a declaration, the agent's own update, a delegation that starts one), and the
 * results of a delegation finish them. The reply commit and the iteration's sub-goal commit apply these
 * functions to recorded data only, so every worker and every retry moves a sub-goal the same way, once.
 * Tool arguments are model output: whatever does not parse is ignored here, and its tool call fails with
 * the same reason (the tools use the same parsers).
 */

export interface SupervisorLimits {
  /** Sub-goals one declaration keeps; more are cut, with a warning. */
  maxSubGoals: number;
  /** Delegations the run's replies may ask for; a reply that asks for more ends the run, partial. */
  maxOrchestrationSteps: number;
}

export const supervisorToolNames = {
  declare: 'declare_sub_goals',
  update: 'update_sub_goal',
} as const;

const idSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,40}$/, 'use 1 to 40 letters, digits, "_" or "-"')
  .describe('a short id of your choosing, e.g. "research"');

export const declareArgumentsSchema = z.strictObject({
  sub_goals: z
    .array(
      z.strictObject({
        id: idSchema,
        title: z.string().min(1).max(500).describe('what the sub-goal achieves, in one line'),
      }),
    )
    .min(1)
    .max(100)
    .describe('the sub-goals, in the order they should be done')
    .refine((goals) => new Set(goals.map((goal) => goal.id)).size === goals.length, {
      error: 'two sub-goals have the same id: give each its own',
    }),
});

export const updateArgumentsSchema = z.strictObject({
  id: idSchema.describe('the id of the sub-goal'),
  status: z.enum(['in_progress', 'completed', 'failed']),
  result: z.string().max(4000).optional().describe('what was achieved, or why it failed'),
});

/** The longest result kept with a sub-goal (its delegation's answer, or its error). */
const subGoalResultLimit = 600;

function parsedArguments<T>(schema: z.ZodType<T>, call: Pick<ToolCallPart, 'arguments'>): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(call.arguments);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The sub_goal ids of a delegation call's tasks (delegate_to_agent: one; spawn_agents: one per task). */
function delegatedGoals(call: Pick<ToolCallPart, 'name' | 'arguments'>): (string | undefined)[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(call.arguments);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const goalOf = (task: unknown) =>
    typeof task === 'object' &&
    task !== null &&
    typeof (task as Record<string, unknown>).sub_goal === 'string'
      ? ((task as Record<string, unknown>).sub_goal as string)
      : undefined;
  if (call.name === 'delegate_to_agent') return [goalOf(record)];
  if (call.name === 'spawn_agents' && Array.isArray(record.tasks)) return record.tasks.map(goalOf);
  return undefined;
}

/** How a declaration's sub-goals join the run's: the kept ones, and what was cut (for the warning). */
export function declaredGoals(
  current: readonly SubGoal[] | null,
  declared: z.infer<typeof declareArgumentsSchema>['sub_goals'],
  limits: Pick<SupervisorLimits, 'maxSubGoals'>,
): { goals: SubGoal[]; cut: number; warning?: string } {
  // A new declaration re-plans: completed sub-goals stay, the others give way to the declared ones.
  const completed = (current ?? []).filter((goal) => goal.status === 'completed');
  const fresh = declared.filter((goal) => !completed.some((done) => done.id === goal.id));
  const kept = fresh.slice(0, limits.maxSubGoals);
  const cut = fresh.length - kept.length;
  return {
    goals: [
      ...completed,
      ...kept.map((goal) => ({ id: goal.id, title: goal.title, status: 'pending' as const, result: null })),
    ],
    cut,
    ...(cut > 0
      ? {
          warning:
            `${fresh.length} sub-goals were declared and max_sub_goals is ${limits.maxSubGoals}: ` +
            `the last ${cut} were cut (${fresh
              .slice(limits.maxSubGoals)
              .map((goal) => goal.id)
              .join(', ')})`,
        }
      : {}),
  };
}

function withStatus(goals: SubGoal[], id: string, status: SubGoalStatus, result?: string | null): boolean {
  const at = goals.findIndex((goal) => goal.id === id);
  const goal = goals[at];
  // A completed sub-goal is done for good: nothing moves it back.
  if (!goal || goal.status === 'completed') return false;
  const next: SubGoal = {
    ...goal,
    status,
    result:
      result === undefined
        ? goal.result
        : result === null
          ? null
          : clipText(result, subGoalResultLimit, 'result'),
  };
  if (next.status === goal.status && next.result === goal.result) return false;
  goals[at] = next;
  return true;
}

/** What one reply's calls do to the sub-goals, and how many delegations they ask for. */
export interface ReplyGoals {
  goals: SubGoal[] | null;
  changed: boolean;
  delegations: number;
  warnings: string[];
}

export function goalsAfterReply(
  current: readonly SubGoal[] | null,
  calls: readonly Pick<ToolCallPart, 'name' | 'arguments'>[],
  limits: Pick<SupervisorLimits, 'maxSubGoals'>,
): ReplyGoals {
  let goals: SubGoal[] | null = current ? [...current] : null;
  let changed = false;
  let delegations = 0;
  const warnings: string[] = [];
  for (const call of calls) {
    if (call.name === supervisorToolNames.declare) {
      const args = parsedArguments(declareArgumentsSchema, call);
      if (!args) continue;
      const declared = declaredGoals(goals, args.sub_goals, limits);
      goals = declared.goals;
      changed = true;
      if (declared.warning) warnings.push(declared.warning);
    } else if (call.name === supervisorToolNames.update) {
      const args = parsedArguments(updateArgumentsSchema, call);
      if (args && goals && withStatus(goals, args.id, args.status, args.result)) changed = true;
    } else {
      const delegated = delegatedGoals(call);
      if (!delegated) continue;
      delegations += delegated.length;
      for (const id of delegated) {
        if (id !== undefined && goals && withStatus(goals, id, 'in_progress', null)) changed = true;
      }
    }
  }
  return { goals, changed, delegations, warnings };
}

/**
 * What the results of a reply's delegations do to the sub-goals they worked on: a delegation that came back
 * completes its sub-goal with its answer; one that failed fails it with the error.
 */
export function goalsAfterResults(
  current: readonly SubGoal[],
  calls: readonly Pick<ToolCallPart, 'id' | 'name' | 'arguments'>[],
  results: ReadonlyMap<string, { content: string; is_error: boolean }>,
): { goals: SubGoal[]; changed: boolean } {
  const goals = [...current];
  let changed = false;
  for (const call of calls) {
    const delegated = delegatedGoals(call);
    const result = results.get(call.id);
    if (!delegated || !result) continue;
    const answers =
      call.name === 'spawn_agents' && !result.is_error ? spawnAnswers(result.content) : undefined;
    delegated.forEach((id, index) => {
      if (id === undefined) return;
      const status = result.is_error ? 'failed' : 'completed';
      const text = answers ? (answers[index] ?? '') : result.content;
      if (withStatus(goals, id, status, text)) changed = true;
    });
  }
  return { goals, changed };
}

function spawnAnswers(content: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(content);
    if (!Array.isArray(value)) return undefined;
    return value.map((item) =>
      typeof item === 'object' && item !== null && typeof (item as { answer?: unknown }).answer === 'string'
        ? (item as { answer: string }).answer
        : '',
    );
  } catch {
    return undefined;
  }
}

/**
 * The calls of the run's latest reply before `iteration` and their results, from the chat: what the
 * sub-goal commit of `iteration` reads.
 */
export function previousCallsAndResults(
  chat: readonly Message[],
  replyId: string,
): {
  calls: Extract<Message['parts'][number], { type: 'tool_call' }>[];
  results: Map<string, { content: string; is_error: boolean }>;
} {
  const results = new Map<string, { content: string; is_error: boolean }>();
  let at = -1;
  for (let index = chat.length - 1; index >= 0; index -= 1) {
    if (chat[index]?.id === replyId) {
      at = index;
      break;
    }
  }
  if (at < 0) return { calls: [], results };
  const calls = (chat[at]?.parts ?? []).filter((part) => part.type === 'tool_call');
  for (const message of chat.slice(at + 1)) {
    for (const part of message.parts) {
      if (part.type === 'tool_result')
        results.set(part.tool_call_id, { content: part.content, is_error: part.is_error });
    }
  }
  return { calls, results };
}

export function allCompleted(goals: readonly SubGoal[] | null): boolean {
  return goals !== null && goals.length > 0 && goals.every((goal) => goal.status === 'completed');
}

const marks: Record<SubGoalStatus, string> = {
  completed: '[✓]',
  in_progress: '[→]',
  pending: '[ ]',
  failed: '[✗]',
};

/** The data of a `progress` event for the sub-goals as they stand. */
export function goalsProgress(goals: readonly SubGoal[], warning?: string) {
  const done = goals.filter((goal) => goal.status === 'completed').length;
  const fraction = goals.length === 0 ? 0 : done / goals.length;
  return {
    fraction,
    message: `${done} of ${goals.length} sub-goals completed`,
    sub_goals: goals.map((goal) => ({ id: goal.id, title: goal.title, status: goal.status })),
    ...(warning ? { warning } : {}),
  };
}

/** The sub-goals as lines a person or a model reads: `[✓] id: title — result`. */
export function goalLines(goals: readonly SubGoal[]): string {
  return goals
    .map(
      (goal) =>
        `${marks[goal.status]} ${goal.id}: ${goal.title}${goal.result !== null ? ` — ${goal.result}` : ''}`,
    )
    .join('\n');
}

/** The answer of a supervisor whose sub-goals are all completed: it finishes without another model call. */
export function autoCompleteAnswer(goals: readonly SubGoal[]): string {
  const all = goals.length === 1 ? 'The sub-goal is' : `All ${goals.length} sub-goals are`;
  return `${all} completed.\n\n${goalLines(goals)}`;
}

/** The answer of a run stopped before its sub-goals were done: what it has. */
export function partialAnswer(goals: readonly SubGoal[] | null, reason: string): string {
  if (!goals || goals.length === 0) return `Stopped: ${reason}. No sub-goals were declared.`;
  return `Stopped: ${reason}. ${goalsProgress(goals).message}.\n\n${goalLines(goals)}`;
}

/** Why a supervisor's final answer is partial (sub-goals not all completed), or undefined. */
export function unfinishedReason(goals: readonly SubGoal[] | null): string | undefined {
  if (!goals || goals.length === 0 || allCompleted(goals)) return undefined;
  const done = goals.filter((goal) => goal.status === 'completed').length;
  return `the run answered with ${done} of ${goals.length} sub-goals completed`;
}

/** Appended to a supervisor's instructions: how it declares, delegates and tracks its sub-goals. */
export function supervisorInstructions(limits: SupervisorLimits): string {
  return [
    'You are a supervisor. In your first reply, call declare_sub_goals with the sub-goals of the task',
    `(at most ${limits.maxSubGoals}; more are cut). Then give each sub-goal to an agent with delegate_to_agent`,
    '(or spawn_agents), naming it in `sub_goal`; a sub-goal you work on yourself, move with update_sub_goal.',
    'When every sub-goal is completed, the run finishes on its own with their results. When one fails, retry',
    'it (delegate it again), re-plan (declare_sub_goals again: completed sub-goals stay), or give up and answer.',
    `At most ${limits.maxOrchestrationSteps} delegations are allowed in all.`,
  ].join(' ');
}
