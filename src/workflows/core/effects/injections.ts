import { type Message, textOf, toolCallsOf, toolResultsOf } from '../../../chat/index.js';
import type { EffectParams } from '../../../config/index.js';
import type { EventData } from '../../../events/event.js';
import { messageId } from '../../ids.js';
import { canonicalJson } from '../canonical-json.js';

/**
 * The effects that add a message for the model: loop_detect, reflection, progress. They read the chat (the
 * whole transcript from the run's start) and decide from it alone, so a rerun decides the same. A message
 * one of them added is in the chat afterwards: each looks only after its own latest message, so it speaks
 * again only when there is something new to say.
 */

export interface InjectionContext {
  runId: string;
  iteration: number;
  now: string;
  /** The chat from the current run's first entry on. */
  chat: readonly Message[];
}

/** A message an effect adds and the event that says so (distributes over a union of kinds). */
export type Injection<Kind extends 'loop_detected' | 'reflection' | 'progress'> = Kind extends unknown
  ? { message: Message; event: { kind: Kind; data: EventData<Kind> } }
  : never;

function effectMessage(context: InjectionContext, effect: string, text: string): Message {
  return {
    id: messageId.effect(context.runId, context.iteration, effect),
    sender: 'ratchet',
    role: 'user',
    parts: [{ type: 'text', text }],
    metadata: { effect, iteration: context.iteration },
    created_at: context.now,
  };
}

/** The chat after the latest message `effect` added (the whole chat when it added none). */
function sinceLast(chat: readonly Message[], effect: string): readonly Message[] {
  for (let index = chat.length - 1; index >= 0; index--) {
    if (chat[index]?.metadata.effect === effect) return chat.slice(index + 1);
  }
  return chat;
}

/** Arguments compare equal when they are the same JSON (key order and spacing aside). */
const canonicalLimit = 100_000;
function canonicalArguments(text: string): string {
  if (text.length > canonicalLimit) return text;
  try {
    return canonicalJson(JSON.parse(text)) ?? text.trim();
  } catch {
    return text.trim();
  }
}

/**
 * loop_detect: among the latest `window_size` tool calls, one call (same tool, same arguments) made
 * `threshold` times or more. The most repeated one is named; on a tie, the one made last.
 */
export function detectLoop(
  context: InjectionContext,
  params: EffectParams<'loop_detect'>,
): Injection<'loop_detected'> | undefined {
  const calls = sinceLast(context.chat, 'loop_detect')
    .filter((message) => message.role === 'assistant')
    .flatMap((message) => toolCallsOf(message))
    .slice(-params.window_size);
  const counts = new Map<string, { count: number; last: number; name: string; arguments: string }>();
  calls.forEach((call, index) => {
    const key = `${call.name}\u0000${canonicalArguments(call.arguments)}`;
    const entry = counts.get(key);
    counts.set(key, {
      count: (entry?.count ?? 0) + 1,
      last: index,
      name: call.name,
      arguments: call.arguments,
    });
  });
  let worst: { count: number; last: number; name: string; arguments: string } | undefined;
  for (const entry of counts.values()) {
    if (!worst || entry.count > worst.count || (entry.count === worst.count && entry.last > worst.last)) {
      worst = entry;
    }
  }
  if (!worst || worst.count < params.threshold) return undefined;
  const text =
    `You have called ${worst.name} with the same arguments ${worst.count} times in your last ` +
    `${calls.length} tool calls, and repeating it will not give a different result. Do not call it again ` +
    'with these arguments: use what you already have, try a different approach, or give your final answer.';
  return {
    message: effectMessage(context, 'loop_detect', text),
    event: {
      kind: 'loop_detected',
      data: {
        iteration: context.iteration,
        tool: worst.name,
        arguments: worst.arguments.slice(0, 4096),
        count: worst.count,
        window_size: params.window_size,
      },
    },
  };
}

/** reflection: the latest `failure_threshold` tool results (or more) in a row are all errors. */
export function promptReflection(
  context: InjectionContext,
  params: EffectParams<'reflection'>,
): Injection<'reflection'> | undefined {
  const results = sinceLast(context.chat, 'reflection')
    .filter((message) => message.role === 'tool')
    .flatMap((message) => toolResultsOf(message));
  let failures = 0;
  for (let index = results.length - 1; index >= 0 && results[index]?.is_error; index--) failures += 1;
  if (failures < params.failure_threshold) return undefined;
  const text =
    `Your last ${failures} tool calls failed. Before the next call, stop and reflect: what do the errors ` +
    'say, which assumption was wrong, and what will you do differently? Then continue with a changed approach.';
  return {
    message: effectMessage(context, 'reflection', text),
    event: { kind: 'reflection', data: { iteration: context.iteration, failures } },
  };
}

/** The name of the memory note a saved reflection is kept under (the latest replaces the one before). */
export const reflectionNoteName = 'reflection';

/**
 * reflection's after phase with `save_to_memory`: the reply to this iteration's reflection prompt (its text),
 * to keep as the agent's memory note `reflection`; nothing when the prompt was not made or the reply has no text.
 */
export function reflectionToRemember(
  view: { reply: Message; chat: readonly Message[] },
  runId: string,
  iteration: number,
): { remember: { name: string; content: string } } | undefined {
  const prompt = messageId.effect(runId, iteration, 'reflection');
  if (!view.chat.some((message) => message.id === prompt)) return undefined;
  const text = textOf(view.reply).trim();
  if (text === '') return undefined;
  return { remember: { name: reflectionNoteName, content: text.slice(0, reflectionNoteLimit) } };
}

/** The most characters of a reflection kept (the memory's own note length bounds it again when written). */
const reflectionNoteLimit = 16_000;

/** progress: before iterations 1 + k × interval (k ≥ 1), that is after every `interval` iterations done. */
export function progressCheckpoint(
  context: InjectionContext,
  params: EffectParams<'progress'>,
): Injection<'progress'> | undefined {
  const done = context.iteration - 1;
  if (done <= 0 || done % params.interval !== 0) return undefined;
  const text =
    `Progress checkpoint: ${done} iterations done. Take stock briefly: what is done, what remains, and ` +
    'is the current approach working? Then continue.';
  return {
    message: effectMessage(context, 'progress', text),
    event: { kind: 'progress', data: { fraction: null, message: `checkpoint after ${done} iterations` } },
  };
}
