import type { Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import {
  type AfterPrevious,
  type ContextErrorPlan,
  type ModelCallInput,
  type ModelCallPlan,
  type PreviousRequest,
  planModelCall,
} from '../../core/effects/index.js';
import { messageId } from '../../ids.js';
import { replyEntrySchema } from '../../journal.js';

/**
 * The effects' side of an iteration (docs/effects.md): what the model is sent of the chat, planned from
 * persisted data only — the chat, the chat's context view, the previous request's recorded numbers and the
 * agent's config — so every worker and every retry plans the same request. The compaction, a durable model
 * call of its own whose result (the new view) is committed before the request that needs it, is a stage
 * (compaction-stage.ts).
 */

/**
 * What the previous iteration's reply entry recorded for this request: the numbers of its request, and what
 * the effects decided after it (messages waiting for this request, a compaction asked for).
 */
export function previousReplyOf(
  replyJson: string | null,
  where: string,
): { previous: PreviousRequest | undefined; afterPrevious: AfterPrevious | undefined } {
  if (replyJson === null) return { previous: undefined, afterPrevious: undefined };
  const entry = parseJsonRecord(replyEntrySchema, replyJson, where);
  const context = entry.context;
  return {
    previous: context && { input_tokens: context.input_tokens, sent_estimate: context.sent_estimate },
    afterPrevious: entry.after && { messages: entry.after.pending, compact: entry.after.compact },
  };
}

/** Where the run's own part of the chat starts: its input message (the chat's start when it has none). */
export function runStartOf(chat: readonly Message[], runId: string): number {
  const id = messageId.input(runId);
  return Math.max(
    0,
    chat.findLastIndex((message) => message.id === id),
  );
}

/**
 * The agent's effects over the request. They are pure code; one that throws (a bug) would throw on every
 * retry too, so the run fails at once with the message instead of spending its attempts.
 */
export function planRequest(input: ModelCallInput): ModelCallPlan {
  try {
    return planModelCall(input);
  } catch (error) {
    if (error instanceof RatchetError) throw error;
    throw new RatchetError(
      'effect_failed',
      `an effect failed while planning the request of iteration ${input.iteration}: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
}

/** A compaction to make before the request: after the planner's threshold or the provider's refusal. */
export type CompactionDecision = Extract<ModelCallPlan | ContextErrorPlan, { kind: 'compact' }>;

/** A request the effects planned to send: the messages, and what they added to and recorded of it. */
export type SendPlan = Extract<ModelCallPlan, { kind: 'send' }>;
