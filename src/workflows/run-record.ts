import { z } from 'zod';
import { subGoalStatusLineSchema } from '../events/event.js';
import { type ContractError, type ContractResult, contractResultSchema } from '../events/result-metadata.js';
import { usageSchema } from '../models/usage.js';
import { defineRecordKind } from '../schemas/record-kinds.js';

export type { ContractError, ContractResult };

/** The most characters of a run's input line (RunRecord.input_line). */
export const inputLineMaxChars = 200;

/**
 * The one list of run statuses, in the order lists show them: what a client sees a run in. `waiting_input`
 * is a queued or running run with a pending question (its own, or for a root run one of its tree's),
 * computed when the run is read: the record stores the others. `waiting_for_worker`: no live worker has
 * served the code one of its steps needs for `worker.capability_wait_s` (decision 0031).
 */
export const listedRunStatusSchema = z.enum([
  'queued',
  'running',
  'waiting',
  'waiting_input',
  'waiting_for_worker',
  'completed',
  'failed',
  'cancelled',
]);
export type ListedRunStatus = z.infer<typeof listedRunStatusSchema>;

/** The statuses a run record stores. */
export const runStatusSchema = listedRunStatusSchema.exclude(['waiting_input']);
export type RunStatus = z.infer<typeof runStatusSchema>;

export const finishedStatuses: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export function isFinished(status: RunStatus): boolean {
  return finishedStatuses.includes(status);
}

/** The root of a run's tree (the run itself when it is a root run): its run budget covers the tree. */
export function treeRootOf(run: { id: string; root_run_id?: string | null | undefined }): string {
  return run.root_run_id ?? run.id;
}

export const runErrorSchema = z.strictObject({ code: z.string(), message: z.string() });
export type RunError = z.infer<typeof runErrorSchema>;

/** Limits of a run's model usage, checked before each model request. */
export const budgetSchema = z.strictObject({
  /** Input plus output tokens. */
  tokens: z.number().int().positive().optional(),
  cost_usd: z.number().positive().optional(),
  /** Past the budget: fail the run, or ask the user whether to raise it (each raise adds the budget once more). */
  on_exceeded: z.enum(['fail', 'ask']).optional(),
});
export type Budget = z.infer<typeof budgetSchema>;

/** One sub-goal a supervisor declared (options.supervisor), and where it stands. */
export const subGoalSchema = subGoalStatusLineSchema.extend({
  /** What finished it (the delegation's answer, or the error that failed it), cut to a few hundred characters. */
  result: z.string().nullable(),
});
export type SubGoalStatus = SubGoal['status'];
export type SubGoal = z.infer<typeof subGoalSchema>;

/**
 * Where a run that continues another one comes from (POST /v1/runs/:id/retry and /fork, decision 0022): a retry
 * continues a failed or cancelled run of the same session under a new id; a fork continues a copy of the
 * chat, up to one iteration's recorded reply, in a new session.
 */
export const runOriginSchema = z.strictObject({
  kind: z.enum(['retry', 'fork']),
  run_id: z.string(),
  session_id: z.string(),
  /** A fork's point: the original's iteration whose reply ends the copied chat; null for a retry. */
  at_iteration: z.number().int().positive().nullable(),
  /**
   * The run whose input message starts this run's part of the chat (the effects look at tool calls from
   * there): the original's for a retry or a fork without input, the fork's own when it has an input.
   */
  input_run_id: z.string(),
});
export type RunOrigin = z.infer<typeof runOriginSchema>;

/** A run a schedule started (decision 0036): which schedule, and the fire time it was started for. */
export const scheduleOriginSchema = z.strictObject({
  kind: z.literal('schedule'),
  schedule: z.string(),
  fire_at: z.iso.datetime(),
});
export type ScheduleOrigin = z.infer<typeof scheduleOriginSchema>;

/** Where a run comes from: the run it continues (a retry, a fork), or the schedule that started it. */
export const anyRunOriginSchema = z.union([runOriginSchema, scheduleOriginSchema]);
export type AnyRunOrigin = z.infer<typeof anyRunOriginSchema>;

/** The run a run continues (a retry's or a fork's origin); null for a run of its own or a schedule's. */
export function continuationOf(run: { origin: AnyRunOrigin | null }): RunOrigin | null {
  return run.origin && run.origin.kind !== 'schedule' ? run.origin : null;
}
/** What a run waits for a worker to serve (RunRecord.waiting_for); at most 50 names of at most 200 characters. */
export const waitingForSchema = z.strictObject({
  since: z.iso.datetime(),
  missing: z.array(z.string().max(210)).max(50),
});
export type WaitingFor = z.infer<typeof waitingForSchema>;

/** The definition a run works under: its hash and when the run took it. */
export const runDefinitionSchema = z.strictObject({
  hash: z.string().regex(/^[0-9a-f]{32}$/),
  recorded_at: z.iso.datetime(),
  /**
   * Why an upgrade left the run on this definition (its agent is gone from the config), said once in an
   * agent_upgraded event; absent when none did.
   */
  kept: z.string().optional(),
});
export type RunDefinition = z.infer<typeof runDefinitionSchema>;

/** A run's record in Redis (hash field `record`). Version 1. */
export const runRecordSchema = z.strictObject({
  v: z.literal(1),
  id: z.string(),
  session_id: z.string(),
  agent: z.string(),
  /** The chat the run works on (`main` for a session's own chat). */
  chat_id: z.string(),
  status: runStatusSchema,
  /** The last iteration whose model reply was committed (0 before the first). */
  iteration: z.number().int().nonnegative(),
  usage: usageSchema,
  /** What the run's model requests cost, in USD, from the config's price table. */
  cost_usd: z.number().nonnegative(),
  /** Model calls whose attempt died before the reply was recorded, estimated at the recorded reply's usage. */
  retry_waste: z.strictObject({
    calls: z.number().int().nonnegative(),
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    cost_usd: z.number().nonnegative(),
  }),
  /** The run's own budget (child runs inherit it); the agent's budget applies too. */
  budget: budgetSchema.nullable(),
  /** How often the user raised the budget: every budget counts (1 + raises) times. */
  budget_raises: z.number().int().nonnegative(),
  /** Final answers the output guardrail sent back so far (`options.output_guardrail.max_retries`). */
  guardrail_retries: z.number().int().nonnegative().default(0),
  /** Set on a child run: the run that started it, the step job that waits for it, and its depth (1 = child). */
  parent: z
    .strictObject({ run_id: z.string(), job_id: z.string(), depth: z.number().int().positive() })
    .nullable()
    .default(null),
  /**
   * The agents above a child run, nearest first: their toolboxes follow the run's own (its own win on a
   * name clash).
   */
  lineage: z.array(z.string()).default([]),
  /** The root of a child run's tree, whose run budget the whole tree shares; null for a root run. */
  root_run_id: z.string().nullable().default(null),
  /** The agent's display prefix, repeated in its agent_start and agent_end events. */
  prefix: z.string().default('🤖'),
  /**
   * When the run must be finished, its child runs included (the agent's `options.timeout_s`, or a shorter
   * one asked for the run; a child run keeps its parent's if that is sooner). Past it the run fails with
   * `deadline_exceeded`. Null: no deadline.
   */
  deadline_at: z.iso.datetime().nullable().default(null),
  /** The tool calls the run's replies asked for: how many, and the names called (sorted, each once). */
  tool_calls: z
    .strictObject({ count: z.number().int().nonnegative(), names: z.array(z.string()) })
    .default({ count: 0, names: [] }),
  /** Fewer model calls than the agent's options.max_iterations, asked for this run (POST /v1/runs); null: the agent's. */
  max_iterations: z.int().positive().nullable().default(null),
  /** A supervisor's sub-goals (options.supervisor), in the order declared; null before any is declared. */
  sub_goals: z.array(subGoalSchema).nullable().default(null),
  /** Delegations a supervisor's replies asked for so far (options.supervisor.max_orchestration_steps). */
  orchestration_steps: z.number().int().nonnegative().default(0),
  /** Set when the run ended with only part of its work done, and why. */
  partial: z.strictObject({ reason: z.string() }).nullable().default(null),
  /**
   * Named intermediate results the run reported (`report_progress`'s `data`), merged when the reply that
   * reports them is recorded; bounded by partialResultLimits.
   */
  partial_results: z.record(z.string(), z.json()).default({}),
  /** The confidence the final answer states (a structured answer's `confidence`, 0..1); null: none stated. */
  confidence: z.number().nullable().default(null),
  /** The final answer checked against its handoff contract; null when no contract applies. */
  contract: contractResultSchema.nullable().default(null),
  /**
   * The version of the schema its final answer was checked against (its contract's `schema_version`, else
   * its agent's `options.output_schema_version`, as its recorded definition had them); null: none.
   */
  schema_version: z.string().nullable().default(null),
  /**
   * The run this one continues (a retry or a fork), or the schedule and fire time that started it; null for a
   * run started with an input of its own.
   */
  origin: anyRunOriginSchema.nullable().default(null),
  /** The run that continues this failed or cancelled one (its retry); null until it is retried. */
  retried_by: z.string().nullable().default(null),
  /**
   * The first line of the run's input (its task), cut to `inputLineMaxChars`, so that a list of runs can show
   * and search what each run is about without reading its chat; null for a run recorded before it was kept,
   * or whose input has no text.
   */
  input_line: z.string().max(inputLineMaxChars).nullable().default(null),
  /**
   * The tenant the run belongs to (decision 0035): its session's; a child run's is its root's. A record from
   * before tenants belongs to `default`.
   */
  tenant: z.string().default('default'),
  /** Its priority within its tenant, 1 to 10, as submitted (default 5); a child run has its root's. */
  priority: z.int().min(1).max(10).default(5),
  /**
   * While the run's status is `waiting_for_worker`: since when its step waits, and what no live worker has
   * (`tool:crm_lookup`, `agent:writer` …, decision 0031); absent otherwise.
   */
  waiting_for: waitingForSchema.optional(),
  /**
   * The resolved definition the run works under (decision 0030): its hash (the `def:<hash>` record) and when
   * the run took it (its start, or the upgrade that moved it). Null for a run recorded before definitions
   * were, or started by an engine without a config: it uses its worker's config.
   */
  definition: runDefinitionSchema.nullable().default(null),
  result: z.string().nullable(),
  error: runErrorSchema.nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  started_at: z.iso.datetime().nullable(),
  finished_at: z.iso.datetime().nullable(),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

/** A run record together with its revision, as read from Redis. */
export interface StoredRun {
  record: RunRecord;
  rev: number;
}

defineRecordKind({ name: 'run', version: 1, schema: runRecordSchema });

/**
 * The record as a commit writes it: `waiting_for` is kept only while the run's status is waiting_for_worker.
 * A step can run (and its commit move the run on) before the worker-found script ends the wait it raced
 * with (decision 0031); the wait's marker is then removed by that script, and the record must not keep it.
 */
export function withoutStaleWait<T extends Pick<RunRecord, 'status' | 'waiting_for'>>(record: T): T {
  if (record.status === 'waiting_for_worker' || record.waiting_for === undefined) return record;
  const { waiting_for: _stale, ...rest } = record;
  return rest as T;
}
