import { z } from 'zod';
import { decodeCursor, type ListKind } from './list-cursor.js';

/** What the list endpoints share (GET /v1/runs, GET /v1/sessions): page size, cursor, times, id prefixes. */

/** The most items one page of a list endpoint holds. */
export const maxListLimit = 500;

export const listTimeSchema = (what: string) =>
  z.iso
    .datetime({ error: 'must be an ISO 8601 date and time in UTC, such as 2026-01-31T12:00:00Z' })
    .optional()
    .describe(what);

export const listLimitSchema = z.coerce
  .number({ error: `must be a whole number from 1 to ${maxListLimit}` })
  .int({ error: `must be a whole number from 1 to ${maxListLimit}` })
  .min(1, { error: `must be a whole number from 1 to ${maxListLimit}` })
  .max(maxListLimit, { error: `must be at most ${maxListLimit}` })
  .default(50)
  .describe(`How many items a page holds (1 to ${maxListLimit}, 50 when omitted).`);

export const listCursorSchema = (kind: ListKind) =>
  z
    .string()
    .refine((cursor) => decodeCursor(kind, cursor) !== undefined, {
      error: `must be a next_cursor returned by GET /v1/${kind}, unchanged`,
    })
    .optional()
    .describe(`The next_cursor of the previous page: the page goes on strictly after its last item.`);

export const idPrefixSchema = z
  .string()
  .regex(/^[0-9a-z_]{1,64}$/, { error: 'must be 1 to 64 lowercase letters, digits or "_" (an id prefix)' })
  .optional();

export const nextCursorSchema = z
  .string()
  .nullable()
  .describe(
    'Pass it as cursor= for the next page; null when there is nothing more. A page may hold fewer than limit items and still have a next_cursor (a rare filter looks at a bounded number of runs per page).',
  );
