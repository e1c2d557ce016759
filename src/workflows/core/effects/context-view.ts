import { z } from 'zod';
import {
  type ContextSummary,
  type ContextView,
  contextViewSchema,
  type Message,
} from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { usageSchema } from '../../../models/usage.js';
import { defineRecordKind } from '../../../schemas/record-kinds.js';
import { messageId } from '../../ids.js';

/**
 * The journal's record of a compaction (`compact:<n>:<up_to>`): the view it made, and what its summary
 * request used and cost (absent in entries recorded before they were kept), so the run's timeline shows the
 * summary call beside the iteration's own.
 */
export const compactionEntrySchema = contextViewSchema.extend({
  usage: usageSchema.optional(),
  cost_usd: z.number().nonnegative().optional(),
});
export type CompactionEntry = z.infer<typeof compactionEntrySchema>;

/** Marks messages no effect may trim, mask or leave out: the summary (system messages are pinned too). */
export const summaryMarker = 'summary';

/**
 * The message the model reads the summary in (a user message: every provider accepts one first).
 * `hiddenReplies` is how many of the model's own replies it stands for.
 */
export function summaryMessage(runId: string, summary: ContextSummary, hiddenReplies = 0): Message {
  return {
    id: messageId.summary(runId, summary.up_to),
    sender: 'ratchet',
    role: 'user',
    parts: [
      {
        type: 'text',
        text:
          'Summary of the conversation so far (earlier messages were summarised to stay within the ' +
          `context window):\n\n${summary.text}`,
      },
    ],
    metadata: { context: summaryMarker, up_to: summary.up_to, hidden_replies: hiddenReplies },
    created_at: summary.created_at,
  };
}

/** The messages of a view before any effect: system prompt, summary, chat entries from `up_to` on. */
export function viewMessages(input: {
  runId: string;
  system: readonly Message[];
  chat: readonly Message[];
  view: ContextView;
}): Message[] {
  const { summary } = input.view;
  if (summary === null) return [...input.system, ...input.chat];
  if (summary.up_to > input.chat.length) {
    throw new RatchetError(
      'record_invalid',
      `the context view summarises ${summary.up_to} chat entries but the chat has ${input.chat.length}`,
    );
  }
  const replies = hiddenReplies(input.chat.slice(0, summary.up_to));
  return [...input.system, summaryMessage(input.runId, summary, replies), ...input.chat.slice(summary.up_to)];
}

/** Whether no effect may change or leave out this message. */
export function isPinned(message: Message): boolean {
  return message.role === 'system' || message.metadata.context === summaryMarker;
}

/** The assistant messages among `messages`, and those that earlier notes or summaries stand for. */
export function hiddenReplies(messages: readonly Message[]): number {
  let count = 0;
  for (const message of messages) {
    if (message.role === 'assistant') count += 1;
    const hidden = message.metadata.hidden_replies;
    if (typeof hidden === 'number') count += hidden;
  }
  return count;
}

defineRecordKind({ name: 'journal.compaction', version: 1, schema: compactionEntrySchema });
