import type { ContextView, Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import {
  type EffectEvent,
  type EffectPlan,
  type EffectView,
  extensionContext,
} from '../../../extensions/index.js';
import { estimateMessagesTokens } from '../../../models/token-estimate.js';

import { sessionIdOfRun } from '../../ids.js';
import { reactiveCompactionCut } from './compaction.js';
import { viewMessages } from './context-view.js';
import { definitionOf, type ResolvedEffect } from './effect-kinds.js';
import { type PreviousRequest, requestTokens } from './request-tokens.js';

export type { EffectEvent } from '../../../extensions/effect-definition.js';

export interface ModelCallInput {
  runId: string;
  /** The agent the request is for (what an effect's context names); '' when not known. */
  agent?: string;
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
  /** What the effects decided after the previous reply (decision 0044); absent when nothing. */
  afterPrevious?: AfterPrevious | undefined;
  effects: readonly ResolvedEffect[];
}

/**
 * What the after phase of the previous reply left for this request: messages that wait for it (the reply made
 * tool calls, so they follow the results) and a compaction asked for before it.
 */
export interface AfterPrevious {
  messages: readonly Message[];
  compact: boolean;
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
      applied: string[];
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
  const runChat = input.chat.slice(input.runStart);
  const step = {
    sessionId: sessionIdOfRun(input.runId) ?? '',
    runId: input.runId,
    agent: input.agent ?? '',
    iteration: input.iteration,
    now: input.now,
  };
  const applied: string[] = [];
  // The after phase's messages, recorded with the previous reply, come first (once: a plan made again after a
  // compaction finds them in `inject`; a request after their commit, in the chat).
  const inject = (input.afterPrevious?.messages ?? []).filter(
    (message) => !runChat.some((other) => other.id === message.id),
  );
  messages = [...messages, ...inject];
  const events: EffectEvent[] = [];
  for (const effect of input.effects) {
    const tokens = tokensOf(messages);
    const view: EffectView = {
      messages,
      tokens,
      reached: (threshold) => input.contextWindow > 0 && tokens >= threshold * input.contextWindow,
      compactionRequested: input.afterPrevious?.compact === true,
      chat: input.chat,
      runChat,
      contextView: input.view,
      contextWindow: input.contextWindow,
    };
    const outcome = runEffect(effect, view, step);
    if (outcome === undefined) continue;
    if (outcome.kind === 'compact')
      return { kind: 'compact', reason: 'threshold', up_to: outcome.upTo, tokens };
    if (outcome.kind === 'messages') {
      if (changedNothing(messages, outcome.messages)) continue;
      messages = outcome.messages;
    } else {
      // Once in the chat (a plan made again after a compaction), a message is not added again.
      const { message, event } = outcome;
      const known = (other: Message) => other.id === message.id;
      if (inject.some(known) || runChat.some(known)) continue;
      inject.push(message);
      if (event) events.push(event);
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

/**
 * One effect's plan, checked: an effect that throws, or plans something the planner cannot use, fails the
 * step with effect_failed naming it (the same would happen on every retry: its inputs are persisted data).
 */
function runEffect(
  effect: ResolvedEffect,
  view: EffectView,
  step: Parameters<typeof extensionContext>[1],
): EffectPlan {
  const failed = (why: string, cause?: unknown) =>
    new RatchetError(
      'effect_failed',
      `the effect "${effect.kind}" ${why} while planning the request of iteration ${step.iteration}`,
      cause === undefined ? {} : { cause },
    );
  let outcome: EffectPlan;
  try {
    outcome = definitionOf(effect).plan(view, {
      ...extensionContext(effect.kind, step),
      options: effect.params,
    });
  } catch (error) {
    throw failed(`threw (${error instanceof Error ? error.message : String(error)})`, error);
  }
  if (outcome === undefined) return undefined;
  if (outcome.kind === 'messages' && Array.isArray(outcome.messages)) return outcome;
  if (outcome.kind === 'inject' && typeof outcome.message?.id === 'string') return outcome;
  if (outcome.kind === 'compact') {
    const from = view.contextView.summary?.up_to ?? 0;
    if (Number.isInteger(outcome.upTo) && outcome.upTo > from && outcome.upTo <= view.chat.length)
      return outcome;
    throw failed(`asked to summarise up to ${outcome.upTo}, outside (${from}, ${view.chat.length}]`);
  }
  throw failed('returned something that is not a plan ({kind: messages | inject | compact} or undefined)');
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
