import type { z } from 'zod';
import type { ExtensionContext } from './context.js';
import type {
  CoordinatorChoice,
  CoordinatorContext,
  CoordinatorDefinition,
  CoordinatorView,
  StopConditionDefinition,
  StopConditionView,
} from './coordinator-definition.js';

/**
 * Defines a coordinator kind for teams (docs/extending.md, "Coordinators"): register it in
 * `extensions.coordinators` and name it in a team's `coordinator: { kind, … }`; its other fields are parsed
 * by `options`.
 */
export function defineCoordinator<Schema extends z.ZodType>(definition: {
  kind: string;
  options: Schema;
  select(
    view: CoordinatorView,
    context: CoordinatorContext<z.output<Schema>>,
  ): CoordinatorChoice | Promise<CoordinatorChoice>;
}): CoordinatorDefinition<z.output<Schema>> {
  return {
    kind: definition.kind,
    options: definition.options as z.ZodType<z.output<Schema>>,
    select: definition.select,
  };
}

/**
 * Defines a stop condition (docs/extending.md, "Stop conditions"): register it in
 * `extensions.stopConditions` and name it in a `round_robin_until` team's `until: { <name>: <options> }`.
 */
export function defineStopCondition<Schema extends z.ZodType>(definition: {
  name: string;
  options: Schema;
  holds(
    view: StopConditionView,
    context: ExtensionContext & { readonly options: z.output<Schema> },
  ): boolean | Promise<boolean>;
}): StopConditionDefinition<z.output<Schema>> {
  return {
    name: definition.name,
    options: definition.options as z.ZodType<z.output<Schema>>,
    holds: definition.holds,
  };
}
