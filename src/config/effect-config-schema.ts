import { z } from 'zod';
import { integer } from '../schemas/index.js';
import { registeredKinds } from './config-extensions.js';
import { unknownKeyMessage } from './config-issues.js';
import { parseOptions, readKindEntry } from './kind-entry.js';

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
    /**
     * Keep the agent's reflection (its reply to the prompt) as the note `reflection` of its memory, so a
     * later session starts with it (needs the `memory` toolbox; bounded and redacted like every note).
     */
    save_to_memory: z.boolean().default(false),
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
  const registered = registeredKinds().effects ?? [];
  const entry = readKindEntry(input, context, {
    noun: 'effect',
    shape: '{kind, params}',
    known: [...effectKinds, ...registered.map((definition) => definition.kind)],
    schemaOf: (kind) =>
      isEffectKind(kind)
        ? effectParamSchemas[kind]
        : registered.find((definition) => definition.kind === kind)?.options,
  });
  if (!entry) return input as EffectConfig;
  const { params, ...rest } = entry.rest;
  for (const key of Object.keys(rest)) {
    context.addIssue({ code: 'custom', path: [key], message: unknownKeyMessage(key, ['kind', 'params']) });
  }
  const parsed = parseOptions(entry.schema, params ?? {}, ['params']);
  for (const issue of parsed.issues) context.addIssue(issue);
  return parsed.issues.length > 0 || Object.keys(rest).length > 0
    ? (input as EffectConfig)
    : ({ kind: entry.kind, params: parsed.value } as EffectConfig);
});
