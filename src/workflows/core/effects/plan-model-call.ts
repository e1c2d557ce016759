import type { Message } from '../../../chat/index.js';
import type { EventData } from '../../../events/event.js';
import { estimateMessagesTokens } from '../../../models/token-estimate.js';
import { reactiveCompactionCut } from './compaction.js';
import { type ContextView, viewMessages } from './context-view.js';
import { decideEffect, type ResolvedEffect } from './effect-kinds.js';
import type { InjectionContext } from './injections.js';
import { type PreviousRequest, requestTokens } from './request-tokens.js';

/** An event an effect asks for, in the event vocabulary. */
export type EffectEvent = {
  [Kind in 'compaction' | 'loop_detected' | 'reflection' | 'progress']: { kind: Kind; data: EventData<Kind> };
}['compaction' | 'loop_detected' | 'reflection' | 'progress'];

export interface ModelCallInput {
  runId: string;
  iteration: number;
  /** The time of the iteration (ISO), given to the messages effects add. */
  now: string;
  /** The system prompt's messages (none when the agent has no instructions). */
  system: readonly Message[];
  /** The chat, the whole transcript. */
  chat: readonly Message[];
  /** Index of the current run's first entry in `chat`: the effects that read tool calls look from there. */
  runStart: number;
  view: ContextView;
  /** The provider's context window; 0 = unknown, and no threshold is ever reached. */
  contextWindow: number;
  previous: PreviousRequest | undefined;
  effects: readonly ResolvedEffect[];
}

/**
 * What happens before an iteration's model call, as data (plain JSON, so it can be journaled and
 * replayed):
 * - `compact`: summarise chat entries [current summary's end, up_to) first (buildSummaryRequest; then
 *   applySummary and plan again with the new view);
 * - `send`: call the model with `messages`. `inject` are the messages effects add, to be appended to the
 *   chat (they end `messages` too); `events` are to be recorded with them; `sent_estimate` is recorded for
 *   the next iteration's token count (PreviousRequest).
 */
export type ModelCallPlan =
  | { kind: 'compact'; reason: 'threshold'; up_to: number; tokens: number }
  | {
      kind: 'send';
      messages: Message[];
      inject: Message[];
      events: EffectEvent[];
      /** The estimated input tokens of `messages`. */
      tokens: number;
      sent_estimate: number;
      /** The effects that changed the messages or added one, in the order they ran. */
      applied: ResolvedEffect['kind'][];
    };

/**
 * Runs the agent's effects, in order, over the view of the chat. Deterministic: the same input gives the
 * same plan on every worker. Shrinking effects with a threshold act only when the request's token count
 * (requestTokens, updated after each effect) reaches threshold × the context window.
 */
export function planModelCall(input: ModelCallInput): ModelCallPlan {
  let messages = viewMessages(input);
  // What the provider counts beyond our estimate (tool definitions, framing) stays as effects change messages.
  const offset = requestTokens(messages, input.previous) - estimateMessagesTokens(messages);
  const tokensOf = (current: readonly Message[]) => Math.max(0, offset + estimateMessagesTokens(current));
  const injection: InjectionContext = {
    runId: input.runId,
    iteration: input.iteration,
    now: input.now,
    chat: input.chat.slice(input.runStart),
  };
  const applied: ResolvedEffect['kind'][] = [];
  const inject: Message[] = [];
  const events: EffectEvent[] = [];
  for (const effect of input.effects) {
    const tokens = tokensOf(messages);
    const outcome = decideEffect(effect, {
      messages,
      tokens,
      reached: (threshold) => input.contextWindow > 0 && tokens >= threshold * input.contextWindow,
      chat: input.chat,
      view: input.view,
      contextWindow: input.contextWindow,
      injection,
    });
    if (outcome === undefined) continue;
    if (outcome.kind === 'compact')
      return { kind: 'compact', reason: 'threshold', up_to: outcome.upTo, tokens };
    if (outcome.kind === 'messages') {
      if (changedNothing(messages, outcome.messages)) continue;
      messages = outcome.messages;
    } else {
      // Once in the chat (a plan made again after a compaction), a message is not added again.
      const { message, event } = outcome.injection;
      const known = (other: Message) => other.id === message.id;
      if (inject.some(known) || injection.chat.some(known)) continue;
      inject.push(message);
      events.push(event);
      messages = [...messages, message];
    }
    applied.push(effect.kind);
  }
  const sentEstimate = estimateMessagesTokens(messages);
  return {
    kind: 'send',
    messages,
    inject,
    events,
    tokens: Math.max(0, offset + sentEstimate),
    sent_estimate: sentEstimate,
    applied,
  };
}

function changedNothing(before: readonly Message[], after: readonly Message[]): boolean {
  return before.length === after.length && before.every((message, index) => message === after[index]);
}

/** What to do when the provider answered a request with a context-length error. */
export type ContextErrorPlan =
  | { kind: 'compact'; reason: 'context_length_error'; up_to: number; tokens: number }
  | { kind: 'fail'; code: 'context_exceeded'; message: string };

/**
 * Reactive compaction: with a `compact` effect, summarise everything not yet summarised (but the messages
 * effects added for this iteration) and try again; fail with context_exceeded when there is nothing left to
 * summarise, or when the agent has no `compact` effect.
 */
export function planAfterContextError(input: ModelCallInput): ContextErrorPlan {
  const tokens = requestTokens(viewMessages(input), input.previous);
  const window = input.contextWindow > 0 ? ` of ${input.contextWindow} tokens` : '';
  if (!input.effects.some((effect) => effect.kind === 'compact')) {
    return {
      kind: 'fail',
      code: 'context_exceeded',
      message:
        `the request (about ${tokens} tokens) does not fit the model's context window${window}, and the ` +
        'agent does not compact its context: add a `compact` effect or leave `effects` out for the defaults',
    };
  }
  const cut = reactiveCompactionCut(input);
  if (cut === undefined) {
    return {
      kind: 'fail',
      code: 'context_exceeded',
      message:
        `the request (about ${tokens} tokens) does not fit the model's context window${window} even ` +
        'after compacting everything before it: the system prompt, the summary or the latest messages alone are too long',
    };
  }
  return { kind: 'compact', reason: 'context_length_error', up_to: cut, tokens };
}
