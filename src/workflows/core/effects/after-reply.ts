import { type Message, messageSchema } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { eventDataSchemas } from '../../../events/event.js';
import {
  type AfterReplyDecision,
  type AfterReplyMessage,
  type AfterReplyQuestion,
  type AfterReplyView,
  type EffectEvent,
  extensionContext,
} from '../../../extensions/index.js';
import { redactSecrets } from '../../../secrets/index.js';
import { askProblem, interactionLimits } from '../../../tools/index.js';
import { sessionIdOfRun } from '../../ids.js';
import { type AfterReplyEntry, afterDecisionSchema, afterEventKinds } from '../../journal.js';

type AfterEventKind = (typeof afterEventKinds)[number];

import { definitionOf, type ResolvedEffect } from './effect-kinds.js';

/**
 * The after phase of the effects (decision 0044): once a reply is made, each effect with an `after` reads it
 * and decides what follows — a message, events, a compaction before the next request. Pure: the decisions
 * are committed with the reply (the reply entry's `after`), and a step that runs again after that commit
 * reads them instead of deciding again.
 */

/** The most characters of text a message of the after phase holds. */
export const afterMessageLimit = 16_000;
/** The most events one effect emits after one reply. */
export const afterEventLimit = 10;
/** The most characters of JSON one effect's note holds. */
export const afterNoteLimit = 4_000;

export interface AfterReplyInput {
  runId: string;
  agent: string;
  iteration: number;
  now: string;
  reply: Message;
  decision: AfterReplyView['decision'];
  chat: readonly Message[];
  runStart: number;
  tokens: number;
  contextWindow: number;
  effects: readonly ResolvedEffect[];
  /** The agent has a memory to keep notes in (the `memory` toolbox). */
  canRemember: boolean;
  /**
   * The run can go on after the reply, so a question may be asked (decision 0049): not after a failure, nor
   * after a final answer at the last iteration.
   */
  canAsk: boolean;
}

/** What the after phase adds to the reply's commit. */
export interface AfterReplyOutcome {
  entry: AfterReplyEntry;
  /** Messages that go into the chat right after the reply (a reply without tool calls). */
  messages: Message[];
  events: EffectEvent[];
}

/** Runs every effect's `after` over the reply, in the chain's order; undefined when none has one. */
export function decideAfterReply(input: AfterReplyInput): AfterReplyOutcome | undefined {
  const withAfter = input.effects.filter((effect) => definitionOf(effect).after !== undefined);
  if (withAfter.length === 0) return undefined;
  const view: AfterReplyView = {
    reply: input.reply,
    decision: input.decision,
    chat: input.chat,
    runChat: input.chat.slice(input.runStart),
    tokens: input.tokens,
  };
  const step = {
    sessionId: sessionIdOfRun(input.runId) ?? '',
    runId: input.runId,
    agent: input.agent,
    iteration: input.iteration,
    now: input.now,
    scope: 'after',
  };
  // A message may not come between tool calls and their results: it waits for the next request.
  const deferred = input.decision === 'tools';
  const outcome: AfterReplyOutcome = {
    entry: { decisions: [], pending: [], compact: false },
    messages: [],
    events: [],
  };
  for (const effect of withAfter) {
    const events: EffectEvent[] = [];
    const questions: AfterReplyQuestion[] = [];
    const failed = (why: string, cause?: unknown) =>
      new RatchetError(
        'effect_failed',
        `the effect "${effect.kind}" ${why} after the reply of iteration ${input.iteration}`,
        cause === undefined ? {} : { cause },
      );
    let decided: AfterReplyDecision;
    try {
      decided = definitionOf(effect).after?.(view, {
        ...extensionContext(effect.kind, step),
        options: effect.params,
        contextWindow: input.contextWindow,
        notify: (event) => {
          events.push(event);
        },
        ask: (question) => {
          questions.push(question);
        },
      });
    } catch (error) {
      throw failed(`threw (${error instanceof Error ? error.message : String(error)})`, error);
    }
    const checked = checkedEvents(events, failed);
    const asked = checkedQuestion(questions, outcome.entry.ask !== undefined, failed);
    if (decided === undefined && checked.length === 0 && (asked === undefined || !input.canAsk)) continue;
    const record: AfterReplyEntry['decisions'][number] = { effect: effect.kind };
    if (asked !== undefined && input.canAsk) {
      record.asked = true;
      outcome.entry.ask = { effect: effect.kind, ...asked };
    }
    if (decided?.note !== undefined) {
      const json = JSON.stringify(decided.note);
      if (json === undefined || json.length > afterNoteLimit)
        throw failed(`gave a note that is not JSON of at most ${afterNoteLimit} characters`);
      record.note = decided.note;
    }
    if (decided?.message !== undefined) {
      const message = afterMessage(decided.message, effect.kind, input, failed);
      record.message_id = message.id;
      if (deferred) outcome.entry.pending.push(message);
      else outcome.messages.push(message);
    }
    if (decided?.compact === true) {
      record.compact = true;
      outcome.entry.compact = true;
    }
    if (decided?.remember !== undefined) {
      const parsed = afterDecisionSchema.shape.remember.safeParse(decided.remember);
      if (!parsed.success || parsed.data === undefined)
        throw failed(
          `asked to remember a note whose name is not 1 to 100 letters, digits, ".", "_" or "-", or whose ` +
            `content is over ${afterMessageLimit} characters`,
        );
      if (!input.canRemember)
        throw failed('asked to remember a note, but the agent has no memory: add the "memory" toolbox');
      record.remember = parsed.data;
    }
    if (checked.length > 0) record.events = checked.map((event) => event.kind as AfterEventKind);
    outcome.events.push(...checked);
    outcome.entry.decisions.push(record);
  }
  return outcome;
}

/** The message an effect adds, checked: text only, from a user or an assistant, bounded; its id is ours. */
function afterMessage(
  given: AfterReplyMessage,
  kind: string,
  input: AfterReplyInput,
  failed: (why: string) => RatchetError,
): Message {
  if (given.role !== 'user' && given.role !== 'assistant')
    throw failed(`added a message of role "${String(given.role)}" (only user or assistant)`);
  if (!Array.isArray(given.parts) || given.parts.some((part) => part.type !== 'text'))
    throw failed('added a message with parts other than text');
  const length = given.parts.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0);
  if (length > afterMessageLimit)
    throw failed(`added a message of ${length} characters (at most ${afterMessageLimit})`);
  const message = {
    id: `${input.runId}-i${input.iteration}-after-${kind}`,
    sender: typeof given.sender === 'string' && given.sender !== '' ? given.sender : 'ratchet',
    role: given.role,
    parts: given.parts,
    metadata: { ...given.metadata, effect: kind, iteration: input.iteration, after: true },
    created_at: input.now,
  };
  const parsed = messageSchema.safeParse(message);
  if (!parsed.success) throw failed(`added a message that is not one: ${parsed.error.message}`);
  return parsed.data;
}

/**
 * The question an effect asked, checked as ask_user's (decision 0049): one a reply, text within its bounds,
 * then redacted like any text a model makes (an effect may quote the reply).
 */
function checkedQuestion(
  questions: readonly AfterReplyQuestion[],
  askedBefore: boolean,
  failed: (why: string) => RatchetError,
): { question: string; options: string[] } | undefined {
  const [first] = questions;
  if (first === undefined) return undefined;
  if (questions.length > 1 || askedBefore)
    throw failed('asked a second question (one question per reply, from all effects together)');
  if (typeof first.question !== 'string' || first.question.trim() === '')
    throw failed('asked a question without text');
  const options = first.options === undefined ? [] : [...first.options];
  if (options.some((option) => typeof option !== 'string'))
    throw failed('asked a question whose options are not all text');
  const problem = askProblem({ question: first.question, options });
  if (problem !== undefined) throw failed(`asked a question that does not fit: ${problem}`);
  // A redaction may be longer than the secret it hides: the bounds hold for what is kept.
  const redacted = (text: string, limit: number) => redactSecrets(text).slice(0, limit);
  return {
    question: redacted(first.question, interactionLimits.questionChars),
    options: options.map((option) => redacted(option, interactionLimits.optionChars)),
  };
}

function checkedEvents(events: EffectEvent[], failed: (why: string) => RatchetError): EffectEvent[] {
  if (events.length > afterEventLimit)
    throw failed(`emitted ${events.length} events (at most ${afterEventLimit})`);
  for (const event of events) {
    if (!(afterEventKinds as readonly string[]).includes(event.kind))
      throw failed(`emitted an event of kind "${event.kind}" (one of ${afterEventKinds.join(', ')})`);
    const parsed = eventDataSchemas[event.kind].safeParse(event.data);
    if (!parsed.success) throw failed(`emitted a ${event.kind} event whose data does not fit it`);
  }
  return events;
}
