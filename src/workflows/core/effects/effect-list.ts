import { type EffectConfig, effectParamSchemas } from '../../../config/index.js';
import { RatchetError } from '../../../errors/index.js';
import { builtinEffects, definitionOf, type EffectRegistry, type ResolvedEffect } from './effect-kinds.js';

export interface ResolveEffectsInput {
  /** The agent's `effects`; undefined when the config does not say (then the defaults apply). */
  configured: readonly EffectConfig[] | undefined;
  /** The provider's resolved context window; 0 means unknown. */
  contextWindow: number;
  /** The agent's `options.context_threshold`. */
  contextThreshold: number;
  /** The kinds the worker knows (effectRegistry); the built-ins when absent. */
  registry?: EffectRegistry;
}

/**
 * The effects an agent runs, in the order they run: by their kind's priority (effect-kinds.ts). Everything
 * that makes the request smaller runs before anything that adds a message, so a message an effect adds is
 * never summarised or trimmed away in the iteration that added it. Within the shrinking effects, the cheap
 * per-message ones run first and `compact` (a model call of its own) last, deciding on what is left after
 * them. Sorting is stable: effects of one kind keep their config order.
 *
 * Without `effects` in the config and with a known context window, the defaults are trim_tool_results (its
 * default params) and compact at `context_threshold`; with a window of 0 there are none. An explicit list
 * (even an empty one) is taken as it is.
 */
export function resolveEffects(input: ResolveEffectsInput): ResolvedEffect[] {
  const configured: readonly EffectConfig[] =
    input.configured ??
    (input.contextWindow > 0
      ? [
          { kind: 'trim_tool_results', params: effectParamSchemas.trim_tool_results.parse({}) },
          { kind: 'compact', params: {} },
        ]
      : []);
  const registry = input.registry ?? builtinEffects;
  const resolved = configured.map((effect): ResolvedEffect => {
    const definition = registry.get(effect.kind);
    if (!definition) {
      throw new RatchetError(
        'config_invalid',
        `effects: the effect kind "${effect.kind}" is not registered on this worker (give its definition in extensions.effects)`,
      );
    }
    if (definition !== builtinEffects.get(effect.kind)) {
      return { kind: effect.kind, params: effect.params, definition };
    }
    if (effect.kind === 'compact') {
      const { threshold } = effect.params as { threshold?: number | undefined };
      return { kind: 'compact', params: { threshold: threshold ?? input.contextThreshold } };
    }
    return effect as ResolvedEffect;
  });
  return resolved
    .map((effect, index) => ({ effect, index }))
    .sort((a, b) => priorityOf(a.effect) - priorityOf(b.effect) || a.index - b.index)
    .map(({ effect }) => effect);
}

function priorityOf(effect: ResolvedEffect): number {
  return definitionOf(effect).priority;
}
