import type { z } from 'zod';
import type { ContextView, Message } from '../chat/index.js';
import type { EventData } from '../events/event.js';
import type { ExtensionContext } from './context.js';

/**
 * What an effect sees of the request being planned (docs/extending.md, "Effects"). Everything here comes
 * from persisted data: the chat, its context view, the previous reply's recorded numbers.
 */
export interface EffectView {
  /** The messages the model would be sent now, as the effects before this one left them. */
  readonly messages: readonly Message[];
  /** The request's estimated token count with `messages` as they are. */
  readonly tokens: number;
  /** The provider's context window in tokens; 0 when unknown. */
  readonly contextWindow: number;
  /** Whether `threshold` × the context window is reached (never with an unknown window). */
  reached(threshold: number): boolean;
  /** The session's whole chat, the transcript (it is never changed by an effect). */
  readonly chat: readonly Message[];
  /** The chat from the current run's first entry on. */
  readonly runChat: readonly Message[];
  /** The chat's context view: the latest summary, when there is one. */
  readonly contextView: ContextView;
}

/** An event an effect may record with the message it adds (the built-ins' vocabulary). */
export type EffectEvent = {
  [Kind in 'compaction' | 'loop_detected' | 'reflection' | 'progress']: { kind: Kind; data: EventData<Kind> };
}['compaction' | 'loop_detected' | 'reflection' | 'progress'];

/**
 * What an effect decides for one request:
 * - `messages`: send these messages instead (the view, changed: trimmed, masked, redacted …);
 * - `inject`: add this message to the chat and to the request (once: a message whose id is in the chat
 *   already is not added again; give it an id from `context.id(...)`), with an event when it has one;
 * - `compact`: ask for a summary of chat entries [current summary's end, `upTo`) first; the planner then
 *   plans again over the new view;
 * - `undefined`: nothing.
 */
export type EffectPlan =
  | { kind: 'messages'; messages: Message[] }
  | { kind: 'inject'; message: Message; event?: EffectEvent | undefined }
  | { kind: 'compact'; upTo: number }
  | undefined;

/** What an effect's `plan` is given besides the view: its options and the step's deterministic inputs. */
export interface EffectContext<Options> extends ExtensionContext {
  /** The effect's `params` from the config, parsed by its `options` schema (defaults filled in). */
  readonly options: Options;
}

/** An effect kind: its name in the config, the schema of its params, and how it plans a request. */
export interface EffectDefinition<Options = unknown> {
  /** The name configs use (`effects: [{ kind, params }]`). */
  readonly kind: string;
  /** The schema of the effect's `params` (a zod schema; an empty `params` must parse for a default). */
  readonly options: z.ZodType<Options>;
  /**
   * Where the kind runs in the chain, lowest first; effects of one priority keep their config order. The
   * built-ins: trim_tool_results 10, observation_mask 20, sliding_window 30, compact 40 (shrinking the
   * request), loop_detect 100, reflection 110, progress 120 (adding a message). Default 50: after every
   * built-in that shrinks the request, before those that add a message.
   */
  readonly priority: number;
  /**
   * Plans this effect's part of the request. Must be a pure function of `view` and `context` (no clock, no
   * I/O, no `Math.random`): a step that runs again plans again, and must send the same request.
   */
  plan(view: EffectView, context: EffectContext<Options>): EffectPlan;
}
