import { z } from 'zod';
import { registeredKinds } from './config-extensions.js';
import { allowedKeys, configErrorMap, describeValue, unknownKeyMessage } from './config-issues.js';
import { integer } from './schema-helpers.js';
import { didYouMean } from './suggest.js';

/** A fraction of the context window: more than 0, at most 1. */
const fraction = z.number().gt(0).lte(1);

/**
 * The parameters of each effect kind, with their defaults (docs/effects.md explains each). `compact` has
 * no default threshold of its own: an absent one is the agent's `options.context_threshold`.
 */
export const effectParamSchemas = {
  compact: z.strictObject({ threshold: fraction.optional() }),
  trim_tool_results: z.strictObject({
    /** Characters kept of each older tool result. */
    max_result_length: integer(1).default(2000),
    /** The newest tool results that are never trimmed. */
    preserve_recent: integer(0).default(4),
  }),
  sliding_window: z.strictObject({
    threshold: fraction.default(0.7),
    /** The newest messages, sent whole. */
    recent_zone: integer(1).default(8),
    /** The messages before them, each cut to trim_length characters; older ones are left out. */
    medium_zone: integer(0).default(8),
    trim_length: integer(1).default(200),
  }),
  observation_mask: z.strictObject({
    threshold: fraction.default(0.6),
    /** The newest tool results that are never masked. */
    recent_window: integer(0).default(4),
  }),
  loop_detect: z
    .strictObject({
      /** Identical calls (same tool, same arguments) within the window that count as a loop. */
      threshold: integer(2).default(3),
      /** How many of the latest tool calls are looked at. */
      window_size: integer(2).default(6),
    })
    .refine((params) => params.threshold <= params.window_size, {
      error: 'threshold must not be larger than window_size',
      path: ['threshold'],
    }),
  reflection: z.strictObject({
    /** Tool failures in a row that prompt a reflection. */
    failure_threshold: integer(1).default(3),
  }),
  progress: z.strictObject({
    /** A checkpoint every this many iterations. */
    interval: integer(1).default(5),
  }),
} as const;

export type EffectKind = keyof typeof effectParamSchemas;
export const effectKinds = Object.keys(effectParamSchemas) as EffectKind[];

export type EffectParams<Kind extends EffectKind> = z.output<(typeof effectParamSchemas)[Kind]>;

/**
 * One configured effect, its params parsed and their defaults filled in: a built-in kind, or one registered
 * in code (extensions.effects) with params as its own schema parsed them.
 */
export type EffectConfig =
  | { [Kind in EffectKind]: { kind: Kind; params: EffectParams<Kind> } }[EffectKind]
  | { kind: string; params: unknown };

function isEffectKind(kind: string): kind is EffectKind {
  return Object.hasOwn(effectParamSchemas, kind);
}

/**
 * One entry of an agent's `effects`: `{kind, params}`. An unknown kind is reported at `kind` with a hint and
 * the known kinds; params are checked by the kind's own schema, unknown ones with a hint from its keys.
 */
export const effectConfigSchema = z.transform((input: unknown, context): EffectConfig => {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    context.addIssue({
      code: 'custom',
      path: [],
      message: `expected a mapping {kind, params}, got ${describeValue(input)}`,
    });
    return input as EffectConfig;
  }
  const { kind, params, ...rest } = input as Record<string, unknown>;
  for (const key of Object.keys(rest)) {
    context.addIssue({ code: 'custom', path: [key], message: unknownKeyMessage(key, ['kind', 'params']) });
  }
  const registered = registeredKinds().effects ?? [];
  const known = [...effectKinds, ...registered.map((definition) => definition.kind)];
  if (typeof kind !== 'string' || kind === '') {
    context.addIssue({
      code: 'custom',
      path: ['kind'],
      message: `expected an effect kind (one of: ${known.join(', ')})`,
    });
    return input as EffectConfig;
  }
  const schema = isEffectKind(kind)
    ? effectParamSchemas[kind]
    : registered.find((definition) => definition.kind === kind)?.options;
  if (schema === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['kind'],
      message: `unknown effect kind "${kind}"${didYouMean(kind, known)}; known kinds: ${known.join(', ')}`,
    });
    return input as EffectConfig;
  }
  const parsed = parseOptions(schema, params ?? {}, ['params']);
  for (const issue of parsed.issues) context.addIssue(issue);
  return parsed.issues.length > 0
    ? (input as EffectConfig)
    : ({ kind, params: parsed.value } as EffectConfig);
});

/**
 * Options of a kind, parsed by its schema: each problem at its path under `at`, an unknown key (of a strict
 * object schema, or of an object schema that would drop it) named with a hint from the schema's keys.
 */
export function parseOptions(
  schema: z.ZodType,
  value: unknown,
  at: readonly PropertyKey[],
): { value: unknown; issues: { code: 'custom'; path: PropertyKey[]; message: string }[] } {
  const issues: { code: 'custom'; path: PropertyKey[]; message: string }[] = [];
  const allowed = allowedKeys(schema);
  if (allowed.length > 0 && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    // A non-strict object schema would drop a misspelt option silently: a config names only known ones.
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        issues.push({ code: 'custom', path: [...at, key], message: unknownKeyMessage(key, allowed) });
      }
    }
  }
  const parsed = schema.safeParse(value, { error: configErrorMap });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          if (issue.path.length === 0 && allowed.length > 0) continue; // reported above
          issues.push({
            code: 'custom',
            path: [...at, ...issue.path, key],
            message: unknownKeyMessage(key, allowedKeys(schema)),
          });
        }
      } else {
        issues.push({ code: 'custom', path: [...at, ...issue.path], message: issue.message });
      }
    }
  }
  return { value: parsed.success ? parsed.data : value, issues };
}
