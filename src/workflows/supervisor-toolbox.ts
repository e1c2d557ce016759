import { createToolBox, defineTool, type SubGoalView, type ToolBox } from '../tools/index.js';
import {
  declareArgumentsSchema,
  declaredGoals,
  goalLines,
  type SupervisorLimits,
  supervisorToolNames,
  updateArgumentsSchema,
} from './core/supervisor.js';

export const supervisorToolboxName = 'supervisor';

function listed(goals: readonly SubGoalView[]): string {
  return goals.length === 0 ? 'No sub-goals are declared.' : goalLines(goals);
}

/**
 * `declare_sub_goals` and `update_sub_goal`, for an agent with options.supervisor. The calls themselves move
 * nothing: the reply commit that recorded them already applied them to the run (core/supervisor.ts, with
 * the same parsers), so a handler only reports where the sub-goals stand, and may run again after a crash.
 */
export function supervisorToolbox(limits: SupervisorLimits): ToolBox {
  const declare = defineTool({
    name: supervisorToolNames.declare,
    description:
      `Declares the sub-goals of your task (at most ${limits.maxSubGoals}; more are cut). Declaring again ` +
      're-plans: completed sub-goals stay, the others are replaced. Then delegate each with ' +
      'delegate_to_agent, naming it in `sub_goal`.',
    inputSchema: declareArgumentsSchema,
    idempotent: true,
    handler: async (context, input) => {
      // The sub-goals after the reply's commit: the completed ones it kept are the ones a re-plan keeps.
      const goals = await context.subGoals();
      const { warning } = declaredGoals(goals, input.sub_goals, limits);
      return `${warning ? `Warning: ${warning}.\n` : ''}Sub-goals:\n${listed(goals)}`;
    },
  });
  const update = defineTool({
    name: supervisorToolNames.update,
    description:
      'Moves a sub-goal you work on yourself: in_progress, completed (with its result) or failed (with why). ' +
      'A completed sub-goal stays completed.',
    inputSchema: updateArgumentsSchema,
    idempotent: true,
    handler: async (context, input) => {
      const goals = await context.subGoals();
      const goal = goals.find((candidate) => candidate.id === input.id);
      if (!goal) {
        throw new Error(
          `id: no sub-goal "${input.id}" (the sub-goals are ${goals.map((known) => known.id).join(', ') || 'none: declare them first'})`,
        );
      }
      return `Sub-goals:\n${listed(goals)}`;
    },
  });
  return createToolBox(supervisorToolboxName, [declare, update]);
}
