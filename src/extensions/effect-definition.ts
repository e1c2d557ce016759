import type { z } from 'zod';
import type { ContextView, Message } from '../chat/index.js';
import type { EventData } from '../events/event.js';
import type { ExtensionContext } from './context.js';
import type { JsonValue } from './middleware.js';

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
  /**
   * An effect's after phase asked for a compaction after the previous reply (decision 0044): the built-in
   * `compact` then summarises as if its threshold were reached.
   */
  readonly compactionRequested: boolean;
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

/**
 * What an effect's `after` phase sees: the reply as it is recorded (tool call ids assigned), what the step
 * decided on it, and the chat it answers. All of it persisted data or derived from it.
 */
export interface AfterReplyView {
  /** The reply's message, as it goes into the chat. */
  readonly reply: Message;
  /**
   * What the reply means for the run: `tools` (it goes on with the calls), `final` (the run completes),
   * `retry` (a check sent the answer back), `failed`.
   */
  readonly decision: 'tools' | 'final' | 'retry' | 'failed';
  /** The session's whole chat before the reply (with the messages effects added for its request). */
  readonly chat: readonly Message[];
  /** The chat from the current run's first entry on, before the reply. */
  readonly runChat: readonly Message[];
  /** The estimated token count of the request the reply answers. */
  readonly tokens: number;
}

/**
 * What an effect's `after` phase is given besides the view: the factory inputs of the reference design (the
 * agent's name, its context window, a way to notify) on top of the effect's context.
 */
export interface AfterReplyContext<Options> extends EffectContext<Options> {
  /** The provider's context window in tokens; 0 when unknown. */
  readonly contextWindow: number;
  /** Emits an event from the effects' vocabulary with this phase's decision (committed with the reply). */
  notify(event: EffectEvent): void;
  /**
   * Asks the person a question (decision 0049), recorded with the reply: the run goes on (a final answer
   * included: it is then not the run's end) and its next iteration waits for the answer, asked exactly like
   * `ask_user` (the inbox, `POST /v1/sessions/:id/respond`, SSE, the console), which joins the chat as the
   * user's message before the next request. One question per reply (a second one fails the step with
   * effect_failed); the text is bounded as `ask_user`'s and redacted. After a reply that ends the run (a
   * failure, or a final answer at the last iteration) nothing is asked.
   */
  ask(question: AfterReplyQuestion): void;
}

/** A question the after phase asks the person: its text and, optionally, the answers to offer. */
export interface AfterReplyQuestion {
  question: string;
  options?: readonly string[] | undefined;
}

/**
 * What an effect decides after a reply, recorded once with the reply's commit (decision 0044):
 * - `message`: add this message ({@link AfterReplyMessage}) to the chat — right after the reply, or, when the reply made tool calls,
 *   after their results (before the next request), so a call is never separated from its result;
 * - `compact`: ask for a compaction before the run's next request (by the agent's `compact` effect);
 * - `note`: a JSON value kept with the decision in the journal (at most 4,000 characters of JSON);
 * - `remember`: keep a note in the agent's memory (the `memory` toolbox's, given to its later runs), written
 *   once after the reply's commit, redacted and held to `tools.memory.max_note_chars`; an agent without the
 *   `memory` toolbox fails the step with effect_failed.
 * Events go through `context.notify`, a question to the person through `context.ask`. `undefined`: nothing.
 */
export type AfterReplyDecision =
  | {
      message?: AfterReplyMessage | undefined;
      compact?: boolean | undefined;
      note?: JsonValue | undefined;
      remember?: { name: string; content: string } | undefined;
    }
  | undefined;

/**
 * A message the after phase adds: text parts only, from the user's side or the assistant's (`sender`
 * defaults to `ratchet`). Ratchet gives it its id (one per effect and iteration, so never added twice), its
 * time, and metadata naming the effect; at most 16,000 characters of text.
 */
export interface AfterReplyMessage {
  role: 'user' | 'assistant';
  parts: Message['parts'];
  sender?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
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
  /**
   * The after phase (optional): reads the reply once it is made and decides what follows it. Called once per
   * reply; the decision is committed with the reply, and a step that runs again after that commit reads it
   * instead of calling `after` again. Same rules as `plan`: decide from the view and context alone.
   */
  after?(view: AfterReplyView, context: AfterReplyContext<Options>): AfterReplyDecision;
}
