import { z } from 'zod';
import { usageSchema } from '../models/usage.js';
// The record module itself, not the workflows index (see questions.ts).
import { inputLineMaxChars, type ListedRunStatus, listedRunStatusSchema } from '../workflows/run-record.js';
import {
  idPrefixSchema,
  listCursorSchema,
  listLimitSchema,
  listTimeSchema,
  maxListLimit,
  nextCursorSchema,
} from './list-paging.js';
import { sessionIdPattern } from './sessions.js';
import { usageTotalsSchema } from './usage-totals.js';

/** The run index on the wire (GET /v1/runs, /v1/runs/summary, and MCP list_runs). */

const statusNames = listedRunStatusSchema.options.join('|');
const statusListPattern = new RegExp(`^(${statusNames})(,(${statusNames}))*$`);
const statusListSchema = z.string().regex(statusListPattern, {
  error: `must be one or more of ${listedRunStatusSchema.options.join(', ')}, separated by commas`,
});

/** The longest text GET /v1/runs?text= searches for: an input line's length. */
const runListTextMaxChars = inputLineMaxChars;

export const runListQuerySchema = z.strictObject({
  status: z
    .union([statusListSchema, z.array(statusListSchema)])
    .optional()
    .describe(
      'Only runs with one of these statuses: repeat the parameter or separate with commas. waiting_input is a queued or running run with a pending question.',
    ),
  agent: z.string().min(1).max(200).optional().describe('Only runs of this agent.'),
  session_id: z
    .string()
    .regex(sessionIdPattern, { error: 'must be a session id: ses_ and 16 lowercase letters or digits' })
    .optional()
    .describe('Only runs of this session.'),
  root: z
    .stringbool({ error: 'must be true or false' })
    .optional()
    .describe('true: only runs started by a client (top-level); false: only child runs.'),
  since: listTimeSchema('Only runs created at or after this time.'),
  until: listTimeSchema('Only runs created at or before this time.'),
  q: idPrefixSchema.describe('Only runs whose id starts with this.'),
  text: z
    .string()
    .trim()
    .min(1, { error: 'must hold at least one character other than white space' })
    .max(runListTextMaxChars, {
      error: `must be at most ${runListTextMaxChars} characters (the most a run's input line holds)`,
    })
    .optional()
    .describe(
      `Only runs whose input line (input_line, the first line of the input) holds this text, ignoring the case of A-Z (1 to ${runListTextMaxChars} characters).`,
    ),
  limit: listLimitSchema,
  cursor: listCursorSchema('runs'),
});

export const runListItemSchema = z
  .strictObject({
    id: z.string(),
    session_id: z.string(),
    agent: z.string(),
    status: listedRunStatusSchema,
    root_run_id: z
      .string()
      .nullable()
      .describe("The root of a child run's tree (null for a run started by a client)."),
    created_at: z.iso.datetime(),
    iterations: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe(
        'Model replies committed so far. This and the fields below come from the run record: null when it cannot be read.',
      ),
    usage: usageSchema.nullable().describe("The run's own model usage (its child runs count their own)."),
    cost_usd: z
      .number()
      .nonnegative()
      .nullable()
      .describe('What the run cost, from the config price table (0 without prices); null when unknown.'),
    started_at: z.iso
      .datetime()
      .nullable()
      .describe('When its first step was committed; null before (and for a run that failed before one).'),
    updated_at: z.iso.datetime().nullable().describe('When its record last changed.'),
    finished_at: z.iso.datetime().nullable().describe('Null while the run is not finished.'),
    input_line: z
      .string()
      .nullable()
      .describe(
        `The first line of the run's input (its task), at most ${inputLineMaxChars} characters; null when it has no text or was recorded before Ratchet kept it.`,
      ),
    duration_ms: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe('finished_at (or now, while it is not finished) minus created_at, in milliseconds.'),
    tree_usage: usageTotalsSchema
      .nullable()
      .describe(
        "A root run's usage and cost with those of every run below it (delegations, team members); null for a child run (GET /v1/runs/:id/tree sums the runs below any run).",
      ),
  })
  .meta({ id: 'RunListItem' });

export const runListSchema = z
  .strictObject({ runs: z.array(runListItemSchema), next_cursor: nextCursorSchema })
  .meta({ id: 'RunList' });

export const runSummaryQuerySchema = z.strictObject({
  since: listTimeSchema('Count only the runs created at or after this time (e.g. an hour ago).'),
});

export const runSummarySchema = z
  .strictObject({
    counts: z.strictObject(
      Object.fromEntries(
        listedRunStatusSchema.options.map((status) => [status, z.number().int().nonnegative()]),
      ) as Record<ListedRunStatus, z.ZodNumber>,
    ),
    total: z.number().int().nonnegative(),
    since: z.iso.datetime().nullable(),
  })
  .meta({ id: 'RunSummary' });

/** GET /v1/runs's filters as a tool's JSON arguments (MCP list_runs): statuses as a list, root as a boolean. */
export const runListInputSchema = z.strictObject({
  ...runListQuerySchema.shape,
  status: z
    .array(listedRunStatusSchema)
    .optional()
    .describe('Only runs with one of these statuses (waiting_input: a run with a pending question).'),
  root: z.boolean().optional().describe('true: only runs started by a client; false: only child runs.'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(maxListLimit)
    .default(50)
    .describe(`How many runs a page holds (1 to ${maxListLimit}).`),
});

/** One page of GET /v1/runs: `next_cursor` is null on the last page. */
export type RunPage = z.output<typeof runListSchema>;
/** A run as the run index lists it (GET /v1/runs/:id, `client.get`, has the rest). */
export type RunListItem = RunPage['runs'][number];
/** The statuses GET /v1/runs lists and filters by (`waiting_input`: a run with a pending question). */
export type RunListStatus = RunListItem['status'];
/** Every status GET /v1/runs lists and filters by, in the order lists show them. */
export const runListStatuses: readonly RunListStatus[] = listedRunStatusSchema.options;
/** A time as a list filter takes it: a Date, or an ISO 8601 time in UTC. */
export type ListTime = string | Date;
/**
 * GET /v1/runs's filters; all optional, and they combine. `since`/`until` take a Date or an ISO 8601 time
 * in UTC; `status` one status or several.
 */
export type RunListFilters = Omit<z.input<typeof runListInputSchema>, 'status' | 'since' | 'until'> & {
  status?: RunListStatus | readonly RunListStatus[];
  since?: ListTime;
  until?: ListTime;
};
/** GET /v1/runs/summary: how many runs have each status. */
export type RunSummary = z.output<typeof runSummarySchema>;
