import { z } from 'zod';
import { queuedMessageSchema } from './messages.js';
import { usageTotalsSchema } from './usage-totals.js';

/** Sessions on the wire (/v1/sessions/:id and the session's data: state, tasks, notes). */

export const sessionIdPattern = /^ses_[0-9a-z]{16}$/;

/** Stored on a session, so bounded: at most `api.max_metadata_bytes` as JSON (the engine checks it). */
export const metadataSchema = z.record(z.string(), z.unknown());
export const metadataBound = 'At most api.max_metadata_bytes (16384 by default) as JSON; more gets 400.';

export const sessionParamsSchema = z.strictObject({ id: z.string().min(1).max(200) });

export const createSessionBodySchema = z
  .strictObject({
    agent: z.string().min(1).optional().describe('Defaults to the entry agent.'),
    metadata: metadataSchema.optional().describe(metadataBound),
  })
  // Fastify hands a request without a body to the validator as null.
  .nullish();

export const sessionSchema = z
  .strictObject({
    id: z.string(),
    agent: z.string(),
    metadata: metadataSchema,
    status: z.enum(['idle', 'active']),
    active_run_id: z.string().nullable(),
    usage: usageTotalsSchema,
    created_at: z.iso.datetime(),
    queued_messages: z
      .array(queuedMessageSchema)
      .describe('Messages waiting to become its next runs, oldest first (`on_busy: queue`).'),
  })
  .meta({ id: 'Session' });
export type Session = z.output<typeof sessionSchema>;

const actorSchema = z.strictObject({ agent: z.string(), run_id: z.string() });

/** GET /v1/sessions/:id/state: the session's state blackboard (the `state` toolbox). */
export const sessionStateSchema = z.strictObject({
  state: z.record(z.string(), z.unknown()).describe('every key the agents set, with its JSON value'),
});

/** GET /v1/sessions/:id/tasks: the session's task board (the `tasks` toolbox). */
export const sessionTaskListSchema = z.strictObject({
  tasks: z.array(
    z.strictObject({
      id: z.string(),
      title: z.string(),
      description: z.string(),
      status: z.enum(['pending', 'in_progress', 'completed', 'failed']),
      assignee: actorSchema.nullable().describe('who claimed it'),
      note: z.string().nullable().describe('the note of the latest status update'),
      created_by: actorSchema,
      updated_by: actorSchema.nullable(),
      created_at: z.iso.datetime(),
      updated_at: z.iso.datetime(),
    }),
  ),
});

/** GET /v1/sessions/:id/notes: the session's notes (the `notes` toolbox), shared and per agent. */
export const sessionNoteListSchema = z.strictObject({
  notes: z.array(
    z.strictObject({
      name: z.string(),
      scope: z.enum(['session', 'agent']),
      agent: z.string().nullable().describe('the agent an `agent` note belongs to'),
      content: z.string(),
      written_by: actorSchema,
      updated_at: z.iso.datetime(),
    }),
  ),
});

export type SessionTask = z.output<typeof sessionTaskListSchema>['tasks'][number];
export type SessionNote = z.output<typeof sessionNoteListSchema>['notes'][number];
