import { z } from 'zod';
import { integer, withDefault } from '../schemas/index.js';
import { registeredKinds } from './config-extensions.js';
import { describeValue } from './config-issues.js';
import { parseOptions, readKindEntry } from './kind-entry.js';
import { didYouMean } from './suggest.js';

/**
 * The options of each built-in stop condition: the value under its key in `until` (docs/config.md, teams).
 * Kinds registered in code (extensions.stopConditions) are named the same way.
 */
export const stopConditionOptionSchemas = {
  /** The team stops once the last shared message contains this text. */
  contains: z.string().min(1),
  /** The team stops once this key exists in the session's shared state. */
  state_key: z.string().min(1),
  /** The team stops once the state key holds this value (compared as JSON, key order aside). */
  state_equals: z.strictObject({ key: z.string().min(1), value: z.json() }),
} as const;

/** A `round_robin_until` condition: exactly one stop condition's name, with its options as the value. */
export type UntilConfig = Record<string, unknown>;

function names(list: readonly string[]): string {
  const quoted = list.map((name) => `\`${name}\``);
  return quoted.length < 2 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

const untilSchema = z.transform((input: unknown, context): UntilConfig => {
  const registered = registeredKinds().stopConditions ?? [];
  const known = [...Object.keys(stopConditionOptionSchemas), ...registered.map((entry) => entry.name)];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    context.addIssue({
      code: 'custom',
      path: [],
      message: `expected a mapping with one of ${names(known)}, got ${describeValue(input)}`,
    });
    return {};
  }
  const given = Object.entries(input).filter(([, value]) => value !== undefined && value !== null);
  const [entry] = given;
  if (given.length !== 1 || entry === undefined) {
    context.addIssue({ code: 'custom', path: [], message: `give exactly one of ${names(known)}` });
    return {};
  }
  const [name, value] = entry;
  const schema =
    stopConditionOptionSchemas[name as keyof typeof stopConditionOptionSchemas] ??
    registered.find((condition) => condition.name === name)?.options;
  if (schema === undefined) {
    context.addIssue({
      code: 'custom',
      path: [name],
      message: `unknown stop condition "${name}"${didYouMean(name, known)}; known conditions: ${known.join(', ')}`,
    });
    return {};
  }
  const parsed = parseOptions(schema, value, [name]);
  for (const issue of parsed.issues) context.addIssue(issue);
  return { [name]: parsed.value };
});

/** The fields of each built-in coordinator kind besides `kind` (docs/config.md, teams). */
export const coordinatorOptionSchemas = {
  /** Each member once, in order. */
  sequence: z.strictObject({}),
  /** Round robin; fails with a max-rounds error when max_rounds is reached (0 = unlimited). */
  loop: z.strictObject({ max_rounds: withDefault(integer(0), 3) }),
  /** Round robin until the condition holds (checked after every member's turn). */
  round_robin_until: z.strictObject({ until: untilSchema, max_rounds: withDefault(integer(0), 10) }),
  /** Cycles through the roles in the order they first appear; all members of a role act at once. */
  role_round_robin: z.strictObject({ max_rounds: withDefault(integer(0), 3) }),
  /** A model picks the next members as JSON {members: [...], done}. */
  llm: z.strictObject({
    provider: z.string().min(1),
    instructions: withDefault(z.string(), ''),
    max_rounds: withDefault(integer(0), 10),
    /**
     * How many of the latest shared messages its requests show (1 to 1000), with its own decisions on them
     * between: its chat across turns.
     */
    window: withDefault(integer(1, 1000), 20),
  }),
} as const;

export type BuiltinCoordinatorKind = keyof typeof coordinatorOptionSchemas;

/** A built-in coordinator as configured, its defaults filled in. */
export type BuiltinCoordinatorConfig = {
  [Kind in BuiltinCoordinatorKind]: { kind: Kind } & z.output<(typeof coordinatorOptionSchemas)[Kind]>;
}[BuiltinCoordinatorKind];

/** A team's coordinator: a built-in kind, or one registered in code with the fields its schema parsed. */
export type CoordinatorConfig = BuiltinCoordinatorConfig | { kind: string; [option: string]: unknown };

export type LlmCoordinatorConfig = Extract<BuiltinCoordinatorConfig, { kind: 'llm' }>;

export function isLlmCoordinator(coordinator: CoordinatorConfig): coordinator is LlmCoordinatorConfig {
  return coordinator.kind === 'llm';
}

export const coordinatorKinds = Object.keys(coordinatorOptionSchemas) as BuiltinCoordinatorKind[];

/**
 * A team's `coordinator`: `{kind, …fields}`. An unknown kind is reported at `kind` with a hint and the known
 * kinds (registered ones too); the other fields are checked by the kind's own schema.
 */
export const coordinatorConfigSchema = z.transform((input: unknown, context): CoordinatorConfig => {
  const registered = registeredKinds().coordinators ?? [];
  const entry = readKindEntry(input, context, {
    noun: 'coordinator',
    shape: '{kind, …}',
    known: [...coordinatorKinds, ...registered.map((definition) => definition.kind)],
    // Own keys only: a kind such as "constructor" is no built-in.
    schemaOf: (kind) =>
      Object.hasOwn(coordinatorOptionSchemas, kind)
        ? coordinatorOptionSchemas[kind as BuiltinCoordinatorKind]
        : registered.find((definition) => definition.kind === kind)?.options,
  });
  if (!entry) return input as CoordinatorConfig;
  const { kind, schema, rest: fields } = entry;
  const parsed = parseOptions(schema, fields, []);
  for (const issue of parsed.issues) context.addIssue(issue);
  if (parsed.issues.length > 0) return input as CoordinatorConfig;
  if (typeof parsed.value !== 'object' || parsed.value === null) {
    context.addIssue({ code: 'custom', path: [], message: `the coordinator "${kind}" takes no such fields` });
    return input as CoordinatorConfig;
  }
  return { ...(parsed.value as Record<string, unknown>), kind } as CoordinatorConfig;
});
