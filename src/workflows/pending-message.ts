import { z } from 'zod';
import { imagePartSchema, type Message, textPartSchema } from '../chat/index.js';
import { buildEvent, type StoredEvent } from '../events/event.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
import { messageId } from './ids.js';
import type { RunRecord } from './run-record.js';

/**
 * A message sent to a busy session (decision 0032), waiting in Redis: in the session's queue (`on_busy:
 * queue`, the session's next run) or in the active run's steer list (`on_busy: steer`, appended to the run's
 * chat before its next model call). The same record in both; one moved from a run's steer list to the queue
 * (the run ended before its next model call) keeps `steered_to`. Version 1.
 */
export const pendingMessageSchema = z.strictObject({
  v: z.literal(1),
  id: z.string(),
  parts: z.array(z.discriminatedUnion('type', [textPartSchema, imagePartSchema])).min(1),
  sent_at: z.iso.datetime(),
  /** The run it was sent to steer, when it was. */
  steered_to: z.string().optional(),
});
export type PendingMessage = z.infer<typeof pendingMessageSchema>;

defineRecordKind({ name: 'session.pending-message', version: 1, schema: pendingMessageSchema });

/**
 * The commit that appends the messages steered into a run before iteration `iteration`'s model call: each a
 * user message, with its message_added and message_steered events (decision 0032).
 */
export function steerCommit(input: {
  run: RunRecord;
  iteration: number;
  steered: readonly PendingMessage[];
  chatLength: number;
  now: string;
}): { journal: { v: 1; index: number; ids: string[] }; messages: Message[]; events: StoredEvent[] } {
  const { run, iteration, steered, chatLength, now } = input;
  const messages: Message[] = steered.map((pending, index) => ({
    id: messageId.steered(run.id, iteration, index),
    sender: 'user',
    role: 'user',
    parts: pending.parts,
    metadata: { steered_message_id: pending.id },
    created_at: now,
  }));
  const events = messages.flatMap((message, offset) => [
    buildEvent('message_added', run, { chat_id: run.chat_id, index: chatLength + offset, message }, now),
    buildEvent(
      'message_steered',
      run,
      { message_id: steered[offset]?.id ?? '', iteration, index: chatLength + offset },
      now,
    ),
  ]);
  return {
    journal: { v: 1, index: chatLength, ids: steered.map((pending) => pending.id) },
    messages,
    events,
  };
}
