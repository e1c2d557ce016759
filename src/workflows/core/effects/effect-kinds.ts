import type { Message } from '../../../chat/index.js';
import type { EffectKind, EffectParams } from '../../../config/index.js';
import { compactionCut, compactionDeclined } from './compaction.js';
import type { ContextView } from './context-view.js';
import {
  detectLoop,
  type Injection,
  type InjectionContext,
  progressCheckpoint,
  promptReflection,
} from './injections.js';
import { maskObservations, slideWindow, trimToolResults } from './view-transforms.js';

/** An effect ready to run: its kind and params with every default filled in (compact's threshold too). */
export type ResolvedEffect =
  | { kind: 'compact'; params: { threshold: number } }
  | { [Kind in Exclude<EffectKind, 'compact'>]: { kind: Kind; params: EffectParams<Kind> } }[Exclude<
      EffectKind,
      'compact'
    >];

/** What an effect sees of the plan being made: the messages so far and their token count. */
export interface PlanState {
  messages: readonly Message[];
  /** The request's token count with the messages as they are now. */
  tokens: number;
  /** Whether `threshold` × the context window is reached (never with an unknown window). */
  reached(threshold: number): boolean;
  chat: readonly Message[];
  view: ContextView;
  contextWindow: number;
  injection: InjectionContext;
}

/** What one effect decides: new messages to send, a message to add, or a compaction first; or nothing. */
export type EffectOutcome =
  | { kind: 'messages'; messages: Message[] }
  | { kind: 'inject'; injection: Injection<'loop_detected' | 'reflection' | 'progress'> }
  | { kind: 'compact'; upTo: number }
  | undefined;

type ParamsOf<Kind extends EffectKind> = Extract<ResolvedEffect, { kind: Kind }>['params'];

export interface EffectKindDefinition<Kind extends EffectKind> {
  /** Where the kind runs in the chain, lowest first (see effect-list.ts for why this order). */
  priority: number;
  decide(params: ParamsOf<Kind>, state: PlanState): EffectOutcome;
}

function injected(
  injection: Injection<'loop_detected' | 'reflection' | 'progress'> | undefined,
): EffectOutcome {
  return injection && { kind: 'inject', injection };
}

/** A view transform that acts once the request reaches its `threshold` of the context window. */
function atThreshold<Params extends { threshold: number }>(
  transform: (messages: readonly Message[], params: Params) => Message[],
): (params: Params, state: PlanState) => EffectOutcome {
  return (params, state) =>
    state.reached(params.threshold)
      ? { kind: 'messages', messages: transform(state.messages, params) }
      : undefined;
}

/** Every effect kind and how it decides: the one table the planner looks kinds up in. */
export const effectKindDefinitions: { [Kind in EffectKind]: EffectKindDefinition<Kind> } = {
  trim_tool_results: {
    priority: 10,
    decide: (params, state) => ({ kind: 'messages', messages: trimToolResults(state.messages, params) }),
  },
  observation_mask: { priority: 20, decide: atThreshold(maskObservations) },
  sliding_window: { priority: 30, decide: atThreshold(slideWindow) },
  compact: {
    priority: 40,
    decide: (params, state) => {
      if (!state.reached(params.threshold)) return undefined;
      if (compactionDeclined(state.view, state.injection.runId, state.injection.iteration)) return undefined;
      const upTo = compactionCut({
        chat: state.chat,
        view: state.view,
        contextWindow: state.contextWindow,
        threshold: params.threshold,
      });
      return upTo === undefined ? undefined : { kind: 'compact', upTo };
    },
  },
  loop_detect: { priority: 100, decide: (params, state) => injected(detectLoop(state.injection, params)) },
  reflection: {
    priority: 110,
    decide: (params, state) => injected(promptReflection(state.injection, params)),
  },
  progress: {
    priority: 120,
    decide: (params, state) => injected(progressCheckpoint(state.injection, params)),
  },
};

/** Runs one resolved effect through its kind's definition. */
export function decideEffect(effect: ResolvedEffect, state: PlanState): EffectOutcome {
  // The table pairs each kind with its params' type; TypeScript cannot follow that through a union lookup.
  const definition = effectKindDefinitions[effect.kind] as EffectKindDefinition<EffectKind>;
  return definition.decide(effect.params as never, state);
}
