import { z } from 'zod';
import { type EventEnvelope, type EventKind, eventDataSchemas, eventUnionSchema } from '../events/event.js';
import { isStreamId, streamIdForm } from './stream-id.js';

/** The session's event stream on the wire (GET /v1/sessions/:id/events, Server-Sent Events). */

export type { EventKind };

export const streamIdSchema = z
  .string()
  .refine(isStreamId, { error: `must be an event id: ${streamIdForm}` })
  .describe(`An event id: ${streamIdForm}.`);

export const eventsQuerySchema = z.strictObject({
  after: streamIdSchema
    .optional()
    .describe('Send the events after this id (exclusive). The Last-Event-ID header wins over it.'),
  follow: z
    .stringbool()
    .default(true)
    .describe(
      "false: end after the current run's terminal event (the active run, else the latest); at once " +
        'after the backlog when there is no run.',
    ),
});

/** An event as sent in an SSE frame's `data` (the frame's `id` and `event` repeat `id` and `kind`). */
export const wireEventSchema = eventUnionSchema({ id: z.string() }).meta({ id: 'Event' });

/** One event as the SSE route sends it in a frame's `data` (`wireEventSchema`), typed by kind. */
export type WireEvent = EventEnvelope<{
  /** The event's id in the session's log (the SSE `id`): resume after it. */
  id: string;
}>;

/** Whether an SSE frame's `event` names a kind this code knows (a newer server may send others). */
export function isEventKind(kind: string): kind is EventKind {
  return Object.hasOwn(eventDataSchemas, kind);
}
