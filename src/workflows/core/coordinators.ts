import type { Message } from '../../chat/index.js';
import {
  type BuiltinCoordinatorConfig,
  coordinatorOptionSchemas,
  stopConditionOptionSchemas,
} from '../../config/index.js';
import { RatchetError } from '../../errors/index.js';
import {
  type CoordinatorChoice,
  type CoordinatorContext,
  type CoordinatorDefinition,
  type CoordinatorView,
  type ExtensionStep,
  extensionContext,
  type StopConditionDefinition,
} from '../../extensions/index.js';
import { type Selection, stateConditionHolds, type TeamRuntime, type TeamState, teamResult } from './team.js';

type Options<Kind extends BuiltinCoordinatorConfig['kind']> = Omit<
  Extract<BuiltinCoordinatorConfig, { kind: Kind }>,
  'kind'
>;

function builtin<Kind extends BuiltinCoordinatorConfig['kind']>(
  kind: Kind,
  select: (
    view: CoordinatorView,
    context: CoordinatorContext<Options<Kind>>,
  ) => CoordinatorChoice | Promise<CoordinatorChoice>,
): CoordinatorDefinition<Options<Kind>> {
  return { kind, options: coordinatorOptionSchemas[kind] as never, select };
}

/** Round robin, one member a turn; `max_rounds` rounds at most (0: no limit), then the run fails. */
function roundRobin(view: CoordinatorView, maxRounds: number): CoordinatorChoice {
  const count = view.team.members.length;
  if (maxRounds > 0 && view.turn >= maxRounds * count) {
    return {
      fail: `team "${view.team.name}" reached max_rounds (${maxRounds}) without finishing`,
      code: 'max_rounds',
    };
  }
  return { act: [view.turn % count] };
}

/**
 * The five built-in coordinators (docs/config.md, teams), defined as any coordinator is (docs/extending.md).
 * `llm` chooses with a durable model call of its own, which the team step makes (team-coordinator.ts).
 */
export const builtinCoordinatorDefinitions: readonly CoordinatorDefinition[] = [
  builtin('sequence', (view) =>
    view.turn < view.team.members.length ? { act: [view.turn] } : { done: true },
  ),
  builtin('loop', (view, { options }) => roundRobin(view, options.max_rounds)),
  builtin('round_robin_until', async (view, context) => {
    if (view.turn > 0 && (await context.stopConditionHolds(context.options.until))) return { done: true };
    return roundRobin(view, context.options.max_rounds);
  }),
  builtin('role_round_robin', (view, { options }) => {
    const roles = [...new Set(view.team.members.map((member) => member.role))];
    if (options.max_rounds > 0 && view.turn >= options.max_rounds * roles.length) return { done: true };
    const role = roles[view.turn % roles.length];
    return { act: view.team.members.flatMap((member, index) => (member.role === role ? [index] : [])) };
  }),
  builtin('llm', () => {
    throw new RatchetError('internal', 'the llm coordinator decides with a model call, not with select');
  }),
];

/** The three built-in stop conditions of round_robin_until's `until`. */
export const builtinStopConditions: readonly StopConditionDefinition[] = [
  {
    name: 'contains',
    options: stopConditionOptionSchemas.contains,
    holds: (view, { options }) => view.lastText.includes(options as string),
  },
  {
    name: 'state_key',
    options: stopConditionOptionSchemas.state_key,
    holds: async (view, { options }) => (await view.readState(options as string)) !== null,
  },
  {
    name: 'state_equals',
    options: stopConditionOptionSchemas.state_equals,
    holds: async (view, { options }) => {
      const condition = options as { key: string; value: unknown };
      return stateConditionHolds({ state_equals: condition }, await view.readState(condition.key));
    },
  },
];

/** Coordinators and stop conditions by name: the built-ins and those registered in code. */
export interface TeamKinds {
  coordinators: ReadonlyMap<string, CoordinatorDefinition>;
  stopConditions: ReadonlyMap<string, StopConditionDefinition>;
}

/** The built-in kinds and the registered ones; a name taken twice (or a built-in's) is a config error. */
export function teamKinds(
  coordinators: readonly CoordinatorDefinition[] = [],
  stopConditions: readonly StopConditionDefinition[] = [],
): TeamKinds {
  return {
    coordinators: byName(
      'coordinators',
      [...builtinCoordinatorDefinitions, ...coordinators],
      (entry) => entry.kind,
    ),
    stopConditions: byName(
      'stopConditions',
      [...builtinStopConditions, ...stopConditions],
      (entry) => entry.name,
    ),
  };
}

function byName<Entry>(what: string, entries: readonly Entry[], nameOf: (entry: Entry) => string) {
  const map = new Map<string, Entry>();
  for (const entry of entries) {
    if (map.has(nameOf(entry))) {
      throw new RatchetError(
        'config_invalid',
        `extensions.${what}: "${nameOf(entry)}" is registered twice (or is a built-in name)`,
      );
    }
    map.set(nameOf(entry), entry);
  }
  return map;
}

/** What a coordinator turn decides from: the team, its turns so far, the shared chat, the session's state. */
export interface CoordinatorInput {
  team: TeamRuntime;
  state: TeamState;
  shared: readonly Message[];
  readState(key: string): Promise<string | null>;
  /** The step (a persisted time as `now`): each extension's context derives from it. */
  step: ExtensionStep;
}

/**
 * The choice of the team's coordinator (every kind but `llm`), as a Selection: a coordinator that throws, or
 * chooses no member or one that is not in the team, fails the run with coordinator_invalid naming it.
 */
export async function coordinatorSelection(input: CoordinatorInput): Promise<Selection> {
  const { team } = input;
  const definition = team.coordinatorDefinition;
  const view: CoordinatorView = {
    team: { name: team.name, members: team.members },
    turn: input.state.turns,
    shared: input.shared,
    lastText: teamResult(input.shared),
    readState: input.readState,
  };
  const invalid = (why: string, cause?: unknown) =>
    new RatchetError(
      'coordinator_invalid',
      `the coordinator "${definition.kind}" of team "${team.name}" ${why}`,
      cause === undefined ? {} : { cause },
    );
  const { kind: _kind, ...options } = team.coordinator;
  const stopConditionHolds = async (until: Readonly<Record<string, unknown>>) => {
    const [entry] = Object.entries(until);
    const condition = entry && team.stopConditions.get(entry[0]);
    if (!entry || !condition)
      throw invalid(`named a stop condition that is not registered: ${JSON.stringify(until)}`);
    return (
      (await condition.holds(view, {
        ...extensionContext(condition.name, input.step),
        options: entry[1],
      })) === true
    );
  };
  let choice: CoordinatorChoice;
  try {
    choice = await definition.select(view, {
      ...extensionContext(definition.kind, input.step),
      options,
      stopConditionHolds,
    });
  } catch (error) {
    if (error instanceof RatchetError) throw error;
    throw invalid(`threw (${error instanceof Error ? error.message : String(error)})`, error);
  }
  if ('done' in choice && choice.done === true) return { kind: 'done' };
  if ('fail' in choice && typeof choice.fail === 'string') {
    return { kind: 'failed', code: choice.code ?? 'coordinator_invalid', message: choice.fail };
  }
  if (!('act' in choice) || !Array.isArray(choice.act)) {
    throw invalid('returned something that is not a choice ({act: [members]}, {done: true} or {fail})');
  }
  const members = choice.act.map((member) =>
    typeof member === 'number' ? member : team.members.findIndex((entry) => entry.agent === member),
  );
  const names = team.members.map((member) => member.agent);
  const unknown = choice.act.filter((_, index) => team.members[members[index] ?? -1] === undefined);
  if (unknown.length > 0) {
    throw invalid(
      `chose ${unknown.map((member) => JSON.stringify(member)).join(', ')}, not a member (members: ${names.join(', ')})`,
    );
  }
  if (members.length === 0) throw invalid('chose no member (return {done: true} to finish)');
  return { kind: 'act', members };
}
