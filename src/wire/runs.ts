import { z } from 'zod';
import { resultMetadataSchema } from '../events/result-metadata.js';
import { usageSchema } from '../models/usage.js';
import {
  defaultRunPriority,
  idempotencyKeySchema,
  maxRunTimeoutS,
  onBusyPolicies,
  runPrioritySchema,
  secondsLimit,
  tenantNameSchema,
} from '../schemas/index.js';
// The record module itself, not the workflows index (see questions.ts).
import {
  anyRunOriginSchema,
  budgetSchema,
  inputLineMaxChars,
  listedRunStatusSchema,
  runDefinitionSchema,
  runErrorSchema,
  subGoalSchema,
  waitingForSchema,
} from '../workflows/run-record.js';
import { inputPartsSchema } from './messages.js';
import { questionSchema } from './questions.js';
import { metadataBound, metadataSchema, sessionIdPattern } from './sessions.js';

/**
 * Runs on the wire: starting one (POST /v1/runs), reading, waiting for and cancelling it (/v1/runs/:id), and
 * continuing one as a retry or a fork. Request bodies are strict (an unknown field is a 400); responses are
 * what the API builds, field by field.
 */

export const runParamsSchema = z.strictObject({ id: z.string().min(1).max(200) });

const runTimeoutError = `must be a whole number of seconds from 1 to ${secondsLimit(maxRunTimeoutS)}`;
/** A run's timeout_s as a request may give it: bounded so its deadline is always a date a record takes. */
const runTimeoutSchema = z
  .int({ error: runTimeoutError })
  .positive({ error: runTimeoutError })
  .max(maxRunTimeoutS, { error: runTimeoutError });

export const createRunBodySchema = z.strictObject({
  input: z.union([z.string().min(1), inputPartsSchema]).describe('Text, or parts (text and images).'),
  agent: z.string().min(1).optional().describe("Defaults to the session's agent, else the entry agent."),
  session_id: z
    .string()
    .regex(sessionIdPattern, 'must be a session id (ses_…)')
    .optional()
    .describe('Continue this session; a new session is created when omitted.'),
  metadata: metadataSchema
    .optional()
    .describe(`Stored on the new session (ignored with session_id). ${metadataBound}`),
  budget: budgetSchema
    .optional()
    .describe(
      'Limits of the run (input + output tokens, USD); the run fails with budget_exceeded past them.',
    ),
  timeout_s: runTimeoutSchema
    .optional()
    .describe(
      `Seconds the run may take, its child runs included: 1 to ${secondsLimit(maxRunTimeoutS)}, and at most ` +
        "the agent's options.timeout_s. Past it the run fails with deadline_exceeded.",
    ),
  max_iterations: z
    .int()
    .positive()
    .optional()
    .describe("Model calls the run may make; at most the agent's options.max_iterations."),
  on_busy: z
    .enum(onBusyPolicies)
    .optional()
    .describe(
      "With session_id, when the session's run is active: reject (409), queue, steer or interrupt, as for " +
        "POST /v1/sessions/:id/messages (default: the agent's options.on_busy). Other than reject, it takes " +
        "no agent, budget, timeout_s or max_iterations: the run it makes has its agent's limits.",
    ),
  tenant: tenantNameSchema
    .optional()
    .describe(
      "The tenant the run (and a new session) belongs to; default `default`. A scoped token's tenant is its own: another is refused. A session's runs are its tenant's.",
    ),
  priority: runPrioritySchema
    .optional()
    .describe(`The run's priority within its tenant, 1 (lowest) to 10; default ${defaultRunPriority}.`),
  idempotency_key: idempotencyKeySchema
    .optional()
    .describe(
      'Makes the submission idempotent, like the Idempotency-Key header (give one or the other, or both alike): the same key within api.idempotency_ttl_s answers 200 with the run it first started; with a different request, 422.',
    ),
});

export const cancelRunBodySchema = z
  .strictObject({ reason: z.string().min(1).max(1000).optional() })
  .nullish()
  .describe('Optional: the reason recorded in the run_cancelled event.');

/** Why a queued root run waits for fair admission (decision 0038): GET /v1/runs/:id and GET /v1/runs. */
export const queuedReasonSchema = z
  .strictObject({
    reason: z
      .enum(['tenant_limit', 'deployment_limit'])
      .describe(
        'tenant_limit: its tenant has max_active_runs active runs; deployment_limit: admission.max_active_runs runs of all tenants are active, and freed slots go to tenants by weighted fair share.',
      ),
    message: z.string().describe('The reason in words, with the counts.'),
    ahead: z.int().nonnegative().describe('Runs of its tenant admitted before it (priority, then age).'),
  })
  .meta({ id: 'QueuedReason' });

/** The longest a client may hold a wait request open. */
export const maxWaitSeconds = 300;

export const waitQuerySchema = z.strictObject({
  timeout_s: z.coerce
    .number()
    .min(0)
    .max(maxWaitSeconds)
    .default(30)
    .describe(`Seconds to wait for the run to finish (at most ${maxWaitSeconds}).`),
});

export const acceptedRunSchema = z
  .strictObject({
    run_id: z.string(),
    session_id: z.string(),
    // A submission to a session (`session_id`), as POST /v1/sessions/:id/messages answers it (SentMessage).
    delivery: z.enum(['started', 'queued', 'steered', 'interrupted']).optional(),
    message_id: z.string().optional(),
    position: z.number().int().nonnegative().optional(),
    interrupted_run_id: z.string().optional(),
    replayed: z
      .literal(true)
      .optional()
      .describe(
        'Present on a replay: an earlier submission with the same idempotency key started this run, and nothing new was started.',
      ),
  })
  .meta({ id: 'AcceptedRun' });

export const progressSchema = z.strictObject({
  fraction: z.number().nullable(),
  message: z.string(),
  at: z.iso.datetime(),
  sub_goals: z
    .array(subGoalSchema)
    .optional()
    .describe("a supervisor's sub-goals (agents[].options.supervisor), in the order declared"),
});

export const runSchema = z
  .strictObject({
    id: z.string(),
    session_id: z.string(),
    agent: z.string(),
    parent_run_id: z
      .string()
      .nullable()
      .describe(
        'The run that started this one by delegation or as a team member (null for a run started by a client).',
      ),
    depth: z
      .number()
      .int()
      .nonnegative()
      .describe('0 for a run started by a client, 1 for its children, and so on.'),
    status: listedRunStatusSchema,
    result: z.string().nullable(),
    error: runErrorSchema.nullable(),
    usage: usageSchema,
    cost_usd: z.number().describe('What the run cost, from the config price table (0 without prices).'),
    retry_waste: z
      .strictObject({
        calls: z.number(),
        input_tokens: z.number(),
        output_tokens: z.number(),
        cost_usd: z.number(),
      })
      .describe(
        'Model calls whose attempt died before the reply was recorded (estimated at the recorded usage).',
      ),
    /** Model replies committed so far. */
    iterations: z.number().int().nonnegative(),
    progress: progressSchema.nullable(),
    pending_question: questionSchema.nullable(),
    waiting: z
      .array(
        z.strictObject({
          kind: z.enum(['event', 'sleep']),
          event: z.string().nullable().describe("The event's name (wait_for_event); null for a sleep."),
          since: z.iso.datetime(),
          until: z.iso.datetime().describe('When the sleep ends, or when the wait for the event times out.'),
        }),
      )
      .describe(
        "What the run's parked tool calls wait for (wait_for_event, sleep) and until when, soonest first; empty when nothing.",
      ),
    input_line: z
      .string()
      .nullable()
      .describe(
        `The first line of the run's input (its task), at most ${inputLineMaxChars} characters; null when it has no text or was recorded before Ratchet kept it.`,
      ),
    created_at: z.iso.datetime(),
    finished_at: z.iso.datetime().nullable(),
    duration_ms: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe(
        'finished_at (or now, while it is not finished) minus created_at, in milliseconds; its tree and the run list count it the same way.',
      ),
    deadline_at: z.iso
      .datetime()
      .nullable()
      .describe(
        'When the run must be finished, its child runs included; past it it fails with deadline_exceeded.',
      ),
    max_iterations: z
      .number()
      .int()
      .positive()
      .nullable()
      .describe(
        "Fewer model calls than the agent's options.max_iterations, asked for this run; null: the agent's.",
      ),
    origin: anyRunOriginSchema
      .nullable()
      .describe(
        'The run this one continues: a retry (same session) or a fork (a new session whose chat was copied up to at_iteration); or, with kind "schedule", the schedule and fire time that started it; null for a run started with an input.',
      ),
    retried_by: z
      .string()
      .nullable()
      .describe(
        'The run that continues this failed or cancelled one (POST /v1/runs/:id/retry); null: not retried.',
      ),
    tenant: z.string().describe("The tenant the run belongs to (a child run: its root run's)."),
    priority: z.int().describe('Its priority within its tenant, 1 to 10.'),
    queued_reason: queuedReasonSchema
      .nullable()
      .optional()
      .describe(
        'While a root run waits for fair admission (status queued, decision 0038): why; null otherwise.',
      ),
    waiting_for: waitingForSchema
      .nullable()
      .optional()
      .describe(
        'While the status is waiting_for_worker: since when, and the names no live worker serves (`tool:crm_lookup`, `middleware:audit`, `agent:writer` …); null otherwise.',
      ),
    definition: runDefinitionSchema
      .nullable()
      .describe(
        "The resolved definition of its agent the run works under (decision 0030): its content hash and when the run took it (its start, or an upgrade). Null for a run recorded before definitions were: it uses its worker's config.",
      ),
    metadata: resultMetadataSchema.describe(
      'What the result says about itself: execution time (until now while running), iterations, tool calls, tokens and cost; confidence, partial and contract are null for now.',
    ),
  })
  .meta({ id: 'Run' });
export type Run = z.output<typeof runSchema>;
export type RunStatus = Run['status'];
export type AcceptedRun = z.output<typeof acceptedRunSchema>;
/** What POST /v1/runs takes; the server validates it and names any invalid field (400 `issues`). */
export type SubmitRunInput = z.input<typeof createRunBodySchema>;

// ── retry and fork (POST /v1/runs/:id/retry, /v1/runs/:id/fork; decision 0022) ───────────────────────

/** Limits a retry or a fork may ask for anew, each at most what the agent allows. */
const continuationLimits = {
  budget: budgetSchema
    .optional()
    .describe(
      "Limits of the run's usage (a retry counts the usage of the run it continues); at most the agent's budget.",
    ),
  timeout_s: runTimeoutSchema
    .optional()
    .describe("Seconds from now the run may take; at most the agent's options.timeout_s (its default)."),
  max_iterations: z
    .int()
    .positive()
    .optional()
    .describe(
      "Model calls the run may make (a retry counts the iterations of the run it continues); at most the agent's options.max_iterations.",
    ),
};

export const retryRunBodySchema = z
  .strictObject(continuationLimits)
  .nullish()
  .describe("Optional: new limits; a retry keeps the retried run's budget and max_iterations otherwise.");

export const forkRunBodySchema = z.strictObject({
  at_iteration: z
    .int()
    .positive()
    .describe("The original's iteration whose recorded reply (and tool results) ends the copied chat."),
  input: z
    .union([z.string().min(1), inputPartsSchema])
    .optional()
    .describe(
      'A new user message after the copied chat; without it the model continues from the fork point.',
    ),
  agent: z
    .string()
    .min(1)
    .optional()
    .describe("Another agent to continue with (e.g. a stronger model); default: the original's."),
  metadata: metadataSchema.optional().describe(`Stored on the new session. ${metadataBound}`),
  ...continuationLimits,
});

/** New limits for a retry (POST /v1/runs/:id/retry); each at most the agent's. */
export type RetryRunInput = NonNullable<z.input<typeof retryRunBodySchema>>;
/** POST /v1/runs/:id/fork's body: where to fork, and what the new run continues with. */
export type ForkRunInput = z.input<typeof forkRunBodySchema>;
