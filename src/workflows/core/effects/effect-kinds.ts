import type { z } from 'zod';
import type { Message } from '../../../chat/index.js';
import { type EffectKind, type EffectParams, effectParamSchemas } from '../../../config/index.js';
import { RatchetError } from '../../../errors/index.js';
import type { EffectContext, EffectDefinition, EffectPlan, EffectView } from '../../../extensions/index.js';
import { compactionCut, compactionDeclined } from './compaction.js';
import {
  detectLoop,
  type Injection,
  type InjectionContext,
  progressCheckpoint,
  promptReflection,
  reflectionToRemember,
} from './injections.js';
import { maskObservations, slideWindow, trimToolResults } from './view-transforms.js';

type BuiltinParams<Kind extends EffectKind> = Kind extends 'compact'
  ? { threshold: number }
  : EffectParams<Kind>;

/**
 * An effect ready to run: its kind and params with every default filled in (compact's threshold too). A kind
 * registered in code carries its definition; the built-ins are looked up in {@link builtinEffects}.
 */
export type ResolvedEffect =
  | { [Kind in EffectKind]: { kind: Kind; params: BuiltinParams<Kind> } }[EffectKind]
  | { kind: string; params: unknown; definition: EffectDefinition };

function builtin<Kind extends EffectKind>(
  kind: Kind,
  priority: number,
  plan: (view: EffectView, context: EffectContext<BuiltinParams<Kind>>) => EffectPlan,
  after?: EffectDefinition<BuiltinParams<Kind>>['after'],
): EffectDefinition<BuiltinParams<Kind>> {
  // compact's schema leaves the threshold out (the agent's context_threshold); resolveEffects fills it in.
  return {
    kind,
    options: effectParamSchemas[kind] as unknown as z.ZodType<BuiltinParams<Kind>>,
    priority,
    plan,
    ...(after ? { after } : {}),
  };
}

function injectionContext(view: EffectView, context: EffectContext<unknown>): InjectionContext {
  return { runId: context.runId, iteration: context.iteration, now: context.now, chat: view.runChat };
}

function injected(injection: Injection<'loop_detected' | 'reflection' | 'progress'> | undefined): EffectPlan {
  return injection && { kind: 'inject', message: injection.message, event: injection.event };
}

/** A view transform that acts once the request reaches its `threshold` of the context window. */
function atThreshold<Params extends { threshold: number }>(
  transform: (messages: readonly Message[], params: Params) => Message[],
): (view: EffectView, context: EffectContext<Params>) => EffectPlan {
  return (view, context) =>
    view.reached(context.options.threshold)
      ? { kind: 'messages', messages: transform(view.messages, context.options) }
      : undefined;
}

/**
 * The built-in effect kinds (docs/effects.md), defined as any effect is (docs/extending.md). The priorities
 * order the chain: everything that makes the request smaller before anything that adds a message (see
 * effect-list.ts for why).
 */
export const builtinEffectDefinitions: readonly EffectDefinition[] = [
  builtin('trim_tool_results', 10, (view, context) => ({
    kind: 'messages',
    messages: trimToolResults(view.messages, context.options),
  })),
  builtin('observation_mask', 20, atThreshold(maskObservations)),
  builtin('sliding_window', 30, atThreshold(slideWindow)),
  builtin('compact', 40, (view, context) => {
    const { threshold } = context.options;
    if (!view.reached(threshold) && !view.compactionRequested) return undefined;
    if (compactionDeclined(view.contextView, context.runId, context.iteration)) return undefined;
    const upTo = compactionCut({
      chat: view.chat,
      view: view.contextView,
      contextWindow: view.contextWindow,
      threshold,
    });
    return upTo === undefined ? undefined : { kind: 'compact', upTo };
  }),
  builtin('loop_detect', 100, (view, context) =>
    injected(detectLoop(injectionContext(view, context), context.options)),
  ),
  builtin(
    'reflection',
    110,
    (view, context) => injected(promptReflection(injectionContext(view, context), context.options)),
    (view, context) =>
      context.options.save_to_memory
        ? reflectionToRemember(view, context.runId, context.iteration)
        : undefined,
  ),
  builtin('progress', 120, (view, context) =>
    injected(progressCheckpoint(injectionContext(view, context), context.options)),
  ),
];

/** Effect kinds by name. */
export type EffectRegistry = ReadonlyMap<string, EffectDefinition>;

/** The built-in kinds: the registry every agent has. */
export const builtinEffects: EffectRegistry = new Map(
  builtinEffectDefinitions.map((definition) => [definition.kind, definition]),
);

/** The built-in kinds and `registered` ones; a name taken twice (or a built-in's) is a config error. */
export function effectRegistry(registered: readonly EffectDefinition[] = []): EffectRegistry {
  const registry = new Map(builtinEffects);
  for (const definition of registered) {
    if (registry.has(definition.kind)) {
      throw new RatchetError(
        'config_invalid',
        `extensions.effects: the effect kind "${definition.kind}" is registered twice${
          builtinEffects.has(definition.kind) ? ' (it is a built-in kind)' : ''
        }`,
      );
    }
    registry.set(definition.kind, definition);
  }
  return registry;
}

/** The definition a resolved effect runs. */
export function definitionOf(effect: ResolvedEffect): EffectDefinition {
  const definition = 'definition' in effect ? effect.definition : builtinEffects.get(effect.kind);
  if (!definition) throw new RatchetError('config_invalid', `unknown effect kind "${effect.kind}"`);
  return definition;
}
