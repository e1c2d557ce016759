import { z } from 'zod';
import { defineRecordKind } from '../schemas/record-kinds.js';

/**
 * What the model is sent of a chat, persisted beside the run: the chat itself stays the whole transcript,
 * and the model gets the system prompt, the summary (when there is one) and the chat entries from `up_to`
 * on. Every worker rebuilds the same messages from it. Version 1.
 */
export const contextViewSchema = z.strictObject({
  v: z.literal(1),
  summary: z
    .strictObject({
      /** The model's summary of chat entries [0, up_to), earlier summaries included. */
      text: z.string(),
      up_to: z.int().nonnegative(),
      created_at: z.iso.datetime(),
    })
    .nullable(),
  /**
   * A compaction this run's iteration gave up (the model's summary was empty and the request still fit): the
   * iteration goes on without one, and a repeated step plans the same request instead of asking again.
   */
  declined: z
    .strictObject({ run_id: z.string(), iteration: z.int().nonnegative(), up_to: z.int().nonnegative() })
    .optional(),
});
export type ContextView = z.infer<typeof contextViewSchema>;
export type ContextSummary = NonNullable<ContextView['summary']>;

/** The view of a chat that was never compacted: the whole chat. */
export const emptyContextView: ContextView = Object.freeze({ v: 1, summary: null });

defineRecordKind({ name: 'chat.context-view', version: 1, schema: contextViewSchema });
