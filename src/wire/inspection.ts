import { z } from 'zod';
import { resultMetadataSchema } from '../events/result-metadata.js';
// The record module itself, not the workflows index (see questions.ts).
import { listedRunStatusSchema, runOriginSchema, runStatusSchema } from '../workflows/run-record.js';

/** A run's tree and its timeline from the journal on the wire (GET /v1/runs/:id/tree, /v1/runs/:id/steps). */

const isoTime = z.iso.datetime();

const treeTokensSchema = z.strictObject({
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  cached_input: z.number().int().nonnegative(),
});

export const runTreeNodeSchema = z
  .strictObject({
    run_id: z.string(),
    parent_run_id: z.string().nullable(),
    /** The step job of the parent that started it (a delegation, a spawn, a team turn). */
    started_by_job: z.string().nullable(),
    agent: z.string(),
    depth: z.number().int().nonnegative(),
    status: listedRunStatusSchema.describe(
      'As GET /v1/runs/:id says it: waiting_input for a queued or running run with a pending question (its own, or for a root run one of its tree).',
    ),
    error_code: z.string().nullable(),
    /** The first line of its input (its task); null when it has none or was recorded before it was kept. */
    input_line: z.string().nullable(),
    created_at: isoTime,
    started_at: isoTime.nullable(),
    finished_at: isoTime.nullable(),
    duration_ms: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe(
        'From its creation to its end, or to now while it is not finished: as GET /v1/runs/:id and GET /v1/runs count it.',
      ),
    iterations: z.number().int().nonnegative(),
    /** Its own model usage. */
    tokens: treeTokensSchema,
    cost_usd: z.number().nonnegative(),
    total: z
      .strictObject({ tokens: treeTokensSchema, cost_usd: z.number().nonnegative() })
      .describe(
        'Its usage with that of every run below it in this answer (a team run: its members; a delegating run: its delegates).',
      ),
    contract: z.strictObject({ contract: z.string(), valid: z.boolean() }).nullable(),
    /** The run it continues: a retry (same session) or a fork (another session); null for neither. */
    origin: runOriginSchema.omit({ input_run_id: true }).nullable(),
    /** The run that continues it when it was retried; null otherwise. */
    retried_by: z.string().nullable(),
    /** How many runs it started (listed after it, depth + 1). */
    children: z.number().int().nonnegative(),
  })
  .meta({ id: 'RunTreeNode' });

export const runTreeSchema = z
  .strictObject({
    run_id: z.string(),
    /** The run, then each run below it, depth first (children oldest first). */
    runs: z.array(runTreeNodeSchema),
    /** More runs than an answer holds (500): the deepest or latest are left out. */
    truncated: z.boolean(),
  })
  .meta({ id: 'RunTree' });

export const stepsQuerySchema = z.strictObject({
  /** The first iteration to show. */
  from: z.coerce.number().int().min(1).max(1_000_000).default(1),
  /** Iterations per page. */
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** Characters of each argument and result shown (the full size is given beside). */
  cut_at: z.coerce.number().int().min(0).max(100_000).default(2_000),
});

const cutTextSchema = z.strictObject({
  text: z.string(),
  /** The full size, in characters. */
  chars: z.number().int().nonnegative(),
  cut: z.boolean(),
});

export const attemptSchema = z
  .strictObject({
    execution: z.number().int().positive(),
    /** The worker process (its id in GET /v1/system). */
    worker: z.string(),
    started_at: isoTime,
    attempt: z.number().int().positive(),
    /** first; retry (after a failed attempt); wake (of a parked step); takeover (the one before died). */
    cause: z.enum(['first', 'retry', 'wake', 'takeover']),
    retry_of: z.string().nullable(),
    parked_at: isoTime.nullable(),
    wake_at: isoTime.nullable(),
  })
  .meta({ id: 'StepAttempt' });

export const waitSchema = z
  .strictObject({
    kind: z.enum(['ask_user', 'approval', 'budget', 'child_run', 'rate_limit', 'parked']),
    id: z.string().nullable(),
    started_at: isoTime,
    ended_at: isoTime.nullable(),
    duration_ms: z.number().int().nonnegative().nullable(),
    status: z.string().nullable(),
  })
  .meta({ id: 'StepWait' });

export const toolCallStepSchema = z
  .strictObject({
    index: z.number().int().nonnegative(),
    id: z.string().nullable(),
    name: z.string().nullable(),
    arguments: cutTextSchema.nullable(),
    result: cutTextSchema.nullable(),
    is_error: z.boolean().nullable(),
    ledger: z.enum(['done', 'rerun', 'outcome_unknown', 'running', 'not_started']),
    started_at: isoTime.nullable(),
    finished_at: isoTime.nullable(),
    duration_ms: z.number().int().nonnegative().nullable(),
    attempts: z.array(attemptSchema),
    attempts_total: z.number().int().nonnegative(),
    approval: z
      .strictObject({
        status: z.string(),
        decision: z.string().nullable(),
        asked_at: isoTime,
        answered_at: isoTime.nullable(),
      })
      .nullable(),
    waits: z.array(waitSchema),
  })
  .meta({ id: 'ToolCallStep' });

export const iterationStepSchema = z
  .strictObject({
    iteration: z.number().int().positive(),
    job_id: z.string(),
    state: z.enum(['committed', 'in_progress']),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    decision: z.enum(['final', 'tools', 'retry', 'ask', 'failed']).nullable(),
    tokens: z
      .strictObject({
        planned: z.number().int().nonnegative().nullable(),
        sent_estimate: z.number().int().nonnegative().nullable(),
        input: z.number().int().nonnegative(),
        output: z.number().int().nonnegative(),
        cached_input: z.number().int().nonnegative(),
      })
      .nullable(),
    cost_usd: z.number().nonnegative().nullable(),
    started_at: isoTime.nullable(),
    finished_at: isoTime.nullable(),
    duration_ms: z.number().int().nonnegative().nullable(),
    model_calls: z.number().int().nonnegative(),
    summary_calls: z.number().int().nonnegative(),
    attempts: z.array(attemptSchema),
    attempts_total: z.number().int().nonnegative(),
    effects_applied: z.array(z.string()),
    compaction: z
      .strictObject({
        up_to: z.number().int().nonnegative(),
        tokens: z
          .strictObject({
            input: z.number().int().nonnegative(),
            output: z.number().int().nonnegative(),
            cached_input: z.number().int().nonnegative(),
          })
          .nullable(),
        cost_usd: z.number().nonnegative().nullable(),
      })
      .nullable()
      .describe(
        "The compaction the iteration made before its request: where the summary ends, and the summary request's own tokens and cost (counted in the run's usage, not in the iteration's tokens; null when recorded before Ratchet kept them).",
      ),
    verdict: z.strictObject({
      answer_rejected: cutTextSchema.nullable(),
      contract: resultMetadataSchema.shape.contract,
    }),
    tool_calls: z.array(toolCallStepSchema),
    waits: z.array(waitSchema),
  })
  .meta({ id: 'IterationStep' });

export const runStepsSchema = z
  .strictObject({
    run_id: z.string(),
    agent: z.string(),
    status: runStatusSchema,
    /** The last iteration whose reply is recorded. */
    iterations: z.number().int().nonnegative(),
    /** The `from` of the next page; null on the last. */
    next_from: z.number().int().positive().nullable(),
    steps: z.array(iterationStepSchema),
  })
  .meta({ id: 'RunSteps' });

/** GET /v1/runs/:id/tree: the run, then each run below it, depth first. */
export type RunTree = z.output<typeof runTreeSchema>;
export type RunTreeNode = RunTree['runs'][number];
/** One page of GET /v1/runs/:id/steps: `next_from` is null on the last page. */
export type RunSteps = z.output<typeof runStepsSchema>;
export type IterationStep = RunSteps['steps'][number];
/** GET /v1/runs/:id/steps's paging: the first iteration, iterations per page, characters shown per text. */
export type StepsQuery = Partial<z.output<typeof stepsQuerySchema>>;
