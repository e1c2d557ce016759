import { z } from 'zod';
import { usageSchema } from '../models/usage.js';
// The record module itself, not the workflows index (see questions.ts).
import { tenantNameSchema } from '../schemas/index.js';
import { inputLineMaxChars, type ListedRunStatus, listedRunStatusSchema } from '../workflows/run-record.js';
import { decodeCursor, type ListKind } from './list-cursor.js';
import { queuedReasonSchema } from './runs.js';
import { sessionIdPattern } from './sessions.js';
import { usageTotalsSchema } from './usage-totals.js';

/**
 * The lists on the wire, paged with a cursor: the run index (GET /v1/runs, /v1/runs/summary) and the session
 * index (GET /v1/sessions), as queries and as the MCP list tools' arguments.
 */

// ── paging, shared by the lists ──────────────────────────────────────────────────────────────────────

/** The most items one page of a list endpoint holds. */
export const maxListLimit = 500;

/** A time as a list filter of the client takes it: a Date, or an ISO 8601 time in UTC. */
export type ListTime = string | Date;

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

/** `limit` as a tool's JSON argument (the MCP list tools): a number, where a query gives a string. */
export const listInputLimitSchema = (items: string) =>
  z
    .number()
    .int()
    .min(1)
    .max(maxListLimit)
    .default(50)
    .describe(`How many ${items} a page holds (1 to ${maxListLimit}).`);

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

// ── runs ─────────────────────────────────────────────────────────────────────────────────────────────

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
  tenant: tenantNameSchema
    .optional()
    .describe(
      "Only runs of this tenant (a child run is its root's), read from the tenant's own index. A scoped token lists its own tenant's runs only, with or without it.",
    ),
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
    tenant: z
      .string()
      .nullable()
      .describe(
        "The tenant the run belongs to (a child run: its root run's); null when its record cannot be read.",
      ),
    queued_reason: queuedReasonSchema
      .nullable()
      .describe(
        'While a root run waits for fair admission (listed status queued, decision 0038): why, as GET /v1/runs/:id shows it; null otherwise.',
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
  limit: listInputLimitSchema('runs'),
});

/** One page of GET /v1/runs: `next_cursor` is null on the last page. */
export type RunPage = z.output<typeof runListSchema>;
/** A run as the run index lists it (GET /v1/runs/:id, `client.get`, has the rest). */
export type RunListItem = RunPage['runs'][number];
/** The statuses GET /v1/runs lists and filters by (`waiting_input`: a run with a pending question). */
export type RunListStatus = RunListItem['status'];
/** Every status GET /v1/runs lists and filters by, in the order lists show them. */
export const runListStatuses: readonly RunListStatus[] = listedRunStatusSchema.options;
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

// ── sessions ─────────────────────────────────────────────────────────────────────────────────────────

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
  limit: listInputLimitSchema('sessions'),
});

/** One page of GET /v1/sessions, most recently active first. */
export type SessionPage = z.output<typeof sessionListSchema>;
export type SessionListItem = SessionPage['sessions'][number];
/** GET /v1/sessions's filters; all optional. */
export type SessionListFilters = Omit<z.input<typeof sessionListInputSchema>, 'since' | 'until'> & {
  since?: ListTime;
  until?: ListTime;
};
