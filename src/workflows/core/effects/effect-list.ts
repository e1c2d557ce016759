import {
  type EffectConfig,
  type EffectKind,
  type EffectParams,
  effectParamSchemas,
} from '../../../config/index.js';

/**
 * Where each kind runs in the chain before a model call, lowest first. Everything that makes the request
 * smaller runs before anything that adds a message, so a message an effect adds is never summarised or
 * trimmed away in the iteration that added it. Within the shrinking effects, the cheap per-message ones run
 * first and `compact` (a model call of its own) last, deciding on what is left after them.
 */
export const effectPriority: Readonly<Record<EffectKind, number>> = {
  trim_tool_results: 10,
  observation_mask: 20,
  sliding_window: 30,
  compact: 40,
  loop_detect: 100,
  reflection: 110,
  progress: 120,
};

/** An effect ready to run: its kind and params with every default filled in (compact's threshold too). */
export type ResolvedEffect =
  | { kind: 'compact'; params: { threshold: number } }
  | { [Kind in Exclude<EffectKind, 'compact'>]: { kind: Kind; params: EffectParams<Kind> } }[Exclude<
      EffectKind,
      'compact'
    >];

export interface ResolveEffectsInput {
  /** The agent's `effects`; undefined when the config does not say (then the defaults apply). */
  configured: readonly EffectConfig[] | undefined;
  /** The provider's resolved context window; 0 means unknown. */
  contextWindow: number;
  /** The agent's `options.context_threshold`. */
  contextThreshold: number;
}

/**
 * The effects an agent runs, in the order they run. Without `effects` in the config and with a known
 * context window, the defaults are trim_tool_results (its default params) and compact at
 * `context_threshold`; with a window of 0 there are none. An explicit list (even an empty one) is taken as
 * it is. Sorting is stable: effects of one kind keep their config order.
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
  const resolved = configured.map(
    (effect): ResolvedEffect =>
      effect.kind === 'compact'
        ? { kind: 'compact', params: { threshold: effect.params.threshold ?? input.contextThreshold } }
        : effect,
  );
  return resolved
    .map((effect, index) => ({ effect, index }))
    .sort((a, b) => effectPriority[a.effect.kind] - effectPriority[b.effect.kind] || a.index - b.index)
    .map(({ effect }) => effect);
}
