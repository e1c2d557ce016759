import { z } from 'zod';
import { imagePartSchema, messageSchema, textPartSchema } from '../chat/index.js';
import { eventDataSchemas, eventKinds } from '../events/event.js';
import { resultMetadataSchema } from '../events/result-metadata.js';
import { usageSchema } from '../models/usage.js';
import { maxRunTimeoutS, secondsLimit } from '../schemas/index.js';
// The record modules themselves, not the workflows index: these wire shapes are shared with the typed client,
// which runs in browsers too and must not pull in the engine.
import { questionRecordSchema, questionResponseSchema } from '../workflows/question-record.js';
import {
  budgetSchema,
  inputLineMaxChars,
  runErrorSchema,
  runOriginSchema,
  subGoalSchema,
} from '../workflows/run-record.js';
import { wireErrorCodes } from './api-error.js';
import { decodeCursor, type ListKind } from './list-cursor.js';
import { isStreamId, streamIdForm } from './stream-id.js';

/**
 * Every shape of the HTTP API, requests and responses: Fastify validates bodies, queries and params with
 * these, serializes responses through them, and the OpenAPI document is generated from them. Request
 * bodies are strict (an unknown field is a 400); responses are what we build, field by field.
 */

const sessionIdPattern = /^ses_[0-9a-z]{16}$/;

// ── errors ───────────────────────────────────────────────────────────────────────────────────────────

export const errorBodySchema = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(Object.keys(wireErrorCodes) as [keyof typeof wireErrorCodes]),
      message: z.string(),
      /**
       * invalid_request: `issues` [{location, path, message}]; not_found: `resource`; conflict: `reason`
       * (session_busy with `active_run_id`, run_finished with `status`, question_closed); internal: `request_id`.
       */
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: 'Error', description: 'The one error shape of every endpoint.' });
export type ErrorBody = z.infer<typeof errorBodySchema>;

// ── requests ─────────────────────────────────────────────────────────────────────────────────────────

/** What a person may put in a message: text and images (tool calls and results are the engine's). */
export const inputPartSchema = z.discriminatedUnion('type', [textPartSchema, imagePartSchema]);
const inputPartsSchema = z.array(inputPartSchema).min(1);

/** Stored on a session, so bounded: at most `api.max_metadata_bytes` as JSON (the engine checks it). */
const metadataSchema = z.record(z.string(), z.unknown());
const metadataBound = 'At most api.max_metadata_bytes (16384 by default) as JSON; more gets 400.';

export const sessionParamsSchema = z.strictObject({ id: z.string().min(1).max(200) });
export const runParamsSchema = z.strictObject({ id: z.string().min(1).max(200) });

export const createSessionBodySchema = z
  .strictObject({
    agent: z.string().min(1).optional().describe('Defaults to the entry agent.'),
    metadata: metadataSchema.optional().describe(metadataBound),
  })
  // Fastify hands a request without a body to the validator as null.
  .nullish();

/** `{text}` or `{parts}`: one object with both optional, so each invalid field is reported with its path. */
export const sendMessageBodySchema = z
  .strictObject({
    text: z.string().min(1).optional(),
    parts: inputPartsSchema.optional(),
  })
  .refine((body) => (body.text === undefined) !== (body.parts === undefined), {
    message: 'give either `text` or `parts`',
  })
  .describe('Either `text` or `parts`.');

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
});

export const cancelRunBodySchema = z
  .strictObject({ reason: z.string().min(1).max(1000).optional() })
  .nullish()
  .describe('Optional: the reason recorded in the run_cancelled event.');

export const respondBodySchema = z.strictObject({
  question_id: z.string().min(1),
  response: questionResponseSchema.describe(
    'Text for an ask_user question; {decision, reason?, arguments?} for a tool approval.',
  ),
});

export const messagesQuerySchema = z.strictObject({
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Only messages whose index is greater than this (all messages when omitted).'),
});

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

// ── responses ────────────────────────────────────────────────────────────────────────────────────────

export const acceptedRunSchema = z
  .strictObject({ run_id: z.string(), session_id: z.string() })
  .meta({ id: 'AcceptedRun' });

export const usageTotalsSchema = z
  .strictObject({
    input_tokens: z.number(),
    output_tokens: z.number(),
    cached_input_tokens: z.number(),
    requests: z.number(),
    cost_usd: z.number(),
  })
  .meta({ id: 'UsageTotals', description: 'Usage summed over runs; cost from the config price table.' });

export const sessionSchema = z
  .strictObject({
    id: z.string(),
    agent: z.string(),
    metadata: metadataSchema,
    status: z.enum(['idle', 'active']),
    active_run_id: z.string().nullable(),
    usage: usageTotalsSchema,
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Session' });
export type WireSession = z.infer<typeof sessionSchema>;

export const questionSchema = questionRecordSchema.omit({ v: true, job_id: true }).meta({
  id: 'Question',
  description: 'A question to a person (ask_user) or a tool call awaiting approval.',
});
export type WireQuestion = z.infer<typeof questionSchema>;

export const questionListSchema = z.strictObject({ questions: z.array(questionSchema) });

/** The most questions one answer of GET /v1/questions holds. */
export const maxInboxLimit = 500;

export const inboxQuerySchema = z.strictObject({
  limit: z.coerce
    .number({ error: `must be a whole number from 1 to ${maxInboxLimit}` })
    .int({ error: `must be a whole number from 1 to ${maxInboxLimit}` })
    .min(1, { error: `must be a whole number from 1 to ${maxInboxLimit}` })
    .max(maxInboxLimit, { error: `must be at most ${maxInboxLimit}` })
    .default(100)
    .describe(`How many questions the answer holds at most (1 to ${maxInboxLimit}, 100 when omitted).`),
});

export const inboxQuestionSchema = questionSchema
  .extend({
    root_run_id: z
      .string()
      .nullable()
      .describe("The root of the asking run's tree (null when the asking run was started by a client)."),
  })
  .meta({ id: 'InboxQuestion', description: 'A pending question of any session, as its session lists it.' });

export const inboxSchema = z
  .strictObject({
    questions: z.array(inboxQuestionSchema).describe('Newest first, by when they were asked.'),
    truncated: z
      .boolean()
      .describe(
        'More were pending than the answer holds: answer some, or ask for a larger limit (the 500 newest runs waiting for input are looked at).',
      ),
  })
  .meta({ id: 'Inbox' });

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

export const respondAcceptedSchema = z.strictObject({ session_id: z.string(), question_id: z.string() });

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
    status: z.enum(['queued', 'running', 'waiting', 'waiting_input', 'completed', 'failed', 'cancelled']),
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
    origin: runOriginSchema
      .nullable()
      .describe(
        'The run this one continues: a retry (same session) or a fork (a new session whose chat was copied up to at_iteration); null for a run started with an input.',
      ),
    retried_by: z
      .string()
      .nullable()
      .describe(
        'The run that continues this failed or cancelled one (POST /v1/runs/:id/retry); null: not retried.',
      ),
    metadata: resultMetadataSchema.describe(
      'What the result says about itself: execution time (until now while running), iterations, tool calls, tokens and cost; confidence, partial and contract are null for now.',
    ),
  })
  .meta({ id: 'Run' });
export type WireRun = z.infer<typeof runSchema>;

export const chatMessageSchema = messageSchema
  .extend({ index: z.number().int().nonnegative().describe('Position in the chat.') })
  .meta({ id: 'Message' });

export const messageListSchema = z.strictObject({ messages: z.array(chatMessageSchema) });

export const runMessageListSchema = z
  .strictObject({
    /** `main` for a root run (its session's chat, every run of the session); the run's own id otherwise. */
    chat_id: z.string(),
    messages: messageListSchema.shape.messages,
  })
  .meta({ id: 'RunMessageList' });

export const agentListSchema = z.strictObject({
  agents: z.array(
    z.strictObject({
      name: z.string(),
      description: z.string(),
      kind: z
        .enum(['agent', 'handoff', 'team'])
        .describe('An agent, a handoff group or a team: each can be started like an agent.'),
      usage: usageTotalsSchema,
    }),
  ),
});

export const agentMemorySchema = z
  .strictObject({
    agent: z.string(),
    notes: z.array(
      z.strictObject({
        name: z.string(),
        scope: z
          .enum(['agent', 'deployment'])
          .describe("`agent`: the agent's own note; `deployment`: a note every agent reads"),
        content: z.string(),
        written_by: z.strictObject({ agent: z.string(), session_id: z.string(), run_id: z.string() }),
        updated_at: z.iso.datetime(),
        expires_at: z.iso.datetime().describe('when it is forgotten unless written again'),
      }),
    ),
  })
  .meta({ id: 'AgentMemory' });

export const agentParamsSchema = z.strictObject({ name: z.string().min(1).max(200) });

export const healthSchema = z.strictObject({ status: z.literal('ok') });

export const readinessSchema = z.strictObject({
  status: z.literal('ready'),
  checks: z.strictObject({ redis: z.literal('ok'), config: z.literal('ok') }),
});

/** An event as sent in an SSE frame's `data` (the frame's `id` and `event` repeat `id` and `kind`). */
export const wireEventSchema = z
  .discriminatedUnion(
    'kind',
    eventKinds.map((kind) =>
      z.strictObject({
        id: z.string(),
        kind: z.literal(kind),
        run_id: z.string(),
        agent: z.string(),
        time: z.iso.datetime(),
        data: eventDataSchemas[kind],
      }),
    ) as unknown as [z.ZodObject, ...z.ZodObject[]],
  )
  .meta({ id: 'Event' });

/** The error responses a route documents, all of the one shape. */
export function errorResponses<Status extends number>(
  ...statuses: Status[]
): Record<Status, typeof errorBodySchema> {
  return Object.fromEntries(statuses.map((status) => [status, errorBodySchema])) as Record<
    Status,
    typeof errorBodySchema
  >;
}

// ── run inspection (GET /v1/runs/:id/tree, /v1/runs/:id/steps, /v1/system) ────────────────────────────

const runStatusWire = z.enum(['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled']);
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
    status: z
      .enum(['queued', 'running', 'waiting', 'waiting_input', 'completed', 'failed', 'cancelled'])
      .describe(
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
    decision: z.enum(['final', 'tools', 'retry', 'failed']).nullable(),
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
    status: runStatusWire,
    /** The last iteration whose reply is recorded. */
    iterations: z.number().int().nonnegative(),
    /** The `from` of the next page; null on the last. */
    next_from: z.number().int().positive().nullable(),
    steps: z.array(iterationStepSchema),
  })
  .meta({ id: 'RunSteps' });

const queueCount = z.number().int().nonnegative();

export const systemStateSchema = z
  .strictObject({
    version: z.string(),
    config_hash: z.string(),
    admin_queues: z
      .string()
      .nullable()
      .describe(
        'Where the queue board (bull-board) is served, when api.admin_queues turns it on; else null.',
      ),
    workers: z.array(
      z.strictObject({
        id: z.string(),
        host: z.string().nullable(),
        pid: z.number().int(),
        concurrency: z.number().int().positive().nullable(),
        shards: z.array(z.number().int().nonnegative()).nullable(),
        started_at: isoTime,
        last_heartbeat_at: isoTime.nullable(),
        /** False: its heartbeat expired; its steps are being taken over. */
        alive: z.boolean(),
      }),
    ),
    queues: z.array(
      z.strictObject({
        shard: z.number().int().nonnegative(),
        counts: z.strictObject({
          waiting: queueCount,
          active: queueCount,
          delayed: queueCount,
          failed: queueCount,
          waiting_children: queueCount,
          prioritized: queueCount,
        }),
        parked: queueCount.describe(
          "Of the delayed jobs counted per kind, the steps parked on purpose: waiting for a person's answer, child runs, a state key or a rate limit, holding no worker (the others wait for a retry's backoff).",
        ),
        by_kind: z.record(
          z.string(),
          z.strictObject({
            waiting: queueCount.optional(),
            active: queueCount.optional(),
            delayed: queueCount.optional(),
            /** Of `delayed`, the parked ones (see `parked`). */
            parked: queueCount.optional(),
            failed: queueCount.optional(),
          }),
        ),
        by_kind_sampled: z.boolean(),
      }),
    ),
    /** Runs by status (waiting_input: with a pending question), from the run index. */
    runs_by_status: z.record(z.string(), queueCount),
  })
  .meta({ id: 'SystemState' });

// ── run index (GET /v1/runs, /v1/runs/summary, GET /v1/sessions) ──────────────────────────────────────

const listedStatusNames = [
  'queued',
  'running',
  'waiting',
  'waiting_input',
  'completed',
  'failed',
  'cancelled',
] as const;
const listedStatusSchema = z.enum(listedStatusNames);

/** The most items one page of a list endpoint holds. */
export const maxListLimit = 500;

const statusListPattern = new RegExp(
  `^(${listedStatusNames.join('|')})(,(${listedStatusNames.join('|')}))*$`,
);
const statusListSchema = z.string().regex(statusListPattern, {
  error: `must be one or more of ${listedStatusNames.join(', ')}, separated by commas`,
});

const listTimeSchema = (what: string) =>
  z.iso
    .datetime({ error: 'must be an ISO 8601 date and time in UTC, such as 2026-01-31T12:00:00Z' })
    .optional()
    .describe(what);

const listLimitSchema = z.coerce
  .number({ error: `must be a whole number from 1 to ${maxListLimit}` })
  .int({ error: `must be a whole number from 1 to ${maxListLimit}` })
  .min(1, { error: `must be a whole number from 1 to ${maxListLimit}` })
  .max(maxListLimit, { error: `must be at most ${maxListLimit}` })
  .default(50)
  .describe(`How many items a page holds (1 to ${maxListLimit}, 50 when omitted).`);

const listCursorSchema = (kind: ListKind) =>
  z
    .string()
    .refine((cursor) => decodeCursor(kind, cursor) !== undefined, {
      error: `must be a next_cursor returned by GET /v1/${kind}, unchanged`,
    })
    .optional()
    .describe(`The next_cursor of the previous page: the page goes on strictly after its last item.`);

const idPrefixSchema = z
  .string()
  .regex(/^[0-9a-z_]{1,64}$/, { error: 'must be 1 to 64 lowercase letters, digits or "_" (an id prefix)' })
  .optional();

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
    status: listedStatusSchema,
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

const nextCursorSchema = z
  .string()
  .nullable()
  .describe(
    'Pass it as cursor= for the next page; null when there is nothing more. A page may hold fewer than limit items and still have a next_cursor (a rare filter looks at a bounded number of runs per page).',
  );

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
        listedStatusNames.map((status) => [status, z.number().int().nonnegative()]),
      ) as Record<(typeof listedStatusNames)[number], z.ZodNumber>,
    ),
    total: z.number().int().nonnegative(),
    since: z.iso.datetime().nullable(),
  })
  .meta({ id: 'RunSummary' });

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

/** GET /v1/runs's filters as a tool's JSON arguments (MCP list_runs): statuses as a list, root as a boolean. */
export const runListInputSchema = z.strictObject({
  ...runListQuerySchema.shape,
  status: z
    .array(listedStatusSchema)
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
