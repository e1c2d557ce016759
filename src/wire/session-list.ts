import { z } from 'zod';
import {
  idPrefixSchema,
  listCursorSchema,
  listLimitSchema,
  listTimeSchema,
  maxListLimit,
  nextCursorSchema,
} from './list-paging.js';
import type { ListTime } from './run-list.js';

/** The session index on the wire (GET /v1/sessions, and MCP list_sessions). */

export const sessionListQuerySchema = z.strictObject({
  status: z
    .enum(['idle', 'active'], { error: 'must be idle or active' })
    .optional()
    .describe('active: a run of it is not finished.'),
  agent: z.string().min(1).max(200).optional().describe('Only sessions with this agent.'),
  since: listTimeSchema('Only sessions last active at or after this time.'),
  until: listTimeSchema('Only sessions last active at or before this time.'),
  q: idPrefixSchema.describe('Only sessions whose id starts with this.'),
  limit: listLimitSchema,
  cursor: listCursorSchema('sessions'),
});

export const sessionListItemSchema = z
  .strictObject({
    id: z.string(),
    agent: z.string(),
    status: z.enum(['idle', 'active']),
    active_run_id: z.string().nullable(),
    created_at: z.iso.datetime(),
    last_active_at: z.iso
      .datetime()
      .describe('When a run of it was last created or finished (its creation, before its first run).'),
  })
  .meta({ id: 'SessionListItem' });

export const sessionListSchema = z
  .strictObject({ sessions: z.array(sessionListItemSchema), next_cursor: nextCursorSchema })
  .meta({ id: 'SessionList' });

/** GET /v1/sessions's filters as a tool's JSON arguments (MCP list_sessions). */
export const sessionListInputSchema = z.strictObject({
  ...sessionListQuerySchema.shape,
  limit: z
    .number()
    .int()
    .min(1)
    .max(maxListLimit)
    .default(50)
    .describe(`How many sessions a page holds (1 to ${maxListLimit}).`),
});

/** One page of GET /v1/sessions, most recently active first. */
export type SessionPage = z.output<typeof sessionListSchema>;
export type SessionListItem = SessionPage['sessions'][number];
/** GET /v1/sessions's filters; all optional. */
export type SessionListFilters = Omit<z.input<typeof sessionListInputSchema>, 'since' | 'until'> & {
  since?: ListTime;
  until?: ListTime;
};
