import { z } from 'zod';
import { messageSchema } from '../chat/index.js';
import { defineRecordKind } from '../schemas/record-kinds.js';
import { maxCoordinatorReasonChars } from './core/coordinator-chat.js';

/**
 * The journal of a run: one hash whose fields record what each step has done. A field is written in the
 * same atomic commit as the step's effects, so a step that runs again sees its own field and changes nothing.
 */
export const journalField = {
  /** Iteration n's model reply is in the chat and the run record reflects it. */
  reply: (iteration: number) => `reply:${iteration}`,
  /** The results of iteration n's tool calls are in the chat (written by iteration n + 1). */
  results: (iteration: number) => `results:${iteration}`,
  /** A tool call is about to run (the ledger's intent). */
  toolIntent: (iteration: number, index: number) => `tool:${iteration}:${index}:intent`,
  /** A tool call's result (the ledger's outcome). */
  toolOutcome: (iteration: number, index: number) => `tool:${iteration}:${index}:outcome`,
  /** A finished call's chat entry, waiting until every call of its iteration has finished. */
  toolEntry: (iteration: number, index: number) => `tool:${iteration}:${index}:entry`,
  /** A finished call's message_added event, waiting with its entry. */
  toolAdded: (iteration: number, index: number) => `tool:${iteration}:${index}:added`,
  /**
   * POST /v1/runs/:id/upgrade asked, at the time it holds: the next iteration that starts after it moves the
   * run to its worker's current definition (decision 0030).
   */
  upgradeRequest: 'upgrade-request',
  /** The n-th progress report of a step job (`report_progress`). */
  progress: (jobId: string, report: number) => `progress:${jobId}:${report}`,
  /** The `data` of a step job's n-th progress report is merged into the run's partial results (decision 0049). */
  partialResults: (jobId: string, report: number) => `partial:${jobId}:${report}`,
  /** An agent's budget was raised for the n-th time (by a person's answer). */
  budgetRaise: (raise: number) => `budget-raise:${raise}`,
  /** A supervisor's sub-goals moved by the results of iteration n - 1's delegations, before iteration n's request. */
  subGoals: (iteration: number) => `goals:${iteration}`,
  /** A failed attempt of a step was announced (an `error` event). */
  attemptFailed: (jobId: string, attempt: number) => `failed:${jobId}:${attempt}`,
  /** The messages steered into the run before iteration n's model call are in the chat (decision 0032). */
  steered: (iteration: number) => `steered:${iteration}`,
  /**
   * The answer to the question an effect asked after iteration n - 1's reply is in the chat, before
   * iteration n's request (decision 0049).
   */
  effectAnswer: (iteration: number) => `effect-answer:${iteration}`,
  /** Model calls started for iteration n (the ones beyond the recorded reply died: retry waste). */
  modelCalls: (iteration: number) => `calls:${iteration}`,
  /**
   * Iteration n summarised the chat up to entry `upTo` (a compaction): the value is the new context view, which
   * the same commit wrote beside the chat.
   */
  compaction: (iteration: number, upTo: number) => `compact:${iteration}:${upTo}`,
  /** Summary model calls started for iteration n's compactions (the ones beyond a recorded one died). */
  summaryCalls: (iteration: number) => `summary-calls:${iteration}`,
  /** A team run's turn n: its members' answers are in the shared chat; the value is the team's state after it. */
  teamTurn: (turn: number) => `team:${turn}`,
  /** The members an `llm` coordinator chose for turn n (recorded before they start). */
  teamSelection: (turn: number) => `team-select:${turn}`,
  /** Coordinator model calls started for turn n, per try (for retry waste). */
  teamCoordinatorCalls: (turn: number, tryNumber: number) => `team-calls:${turn}:${tryNumber}`,
  /**
   * A step parked itself to wait (a question, child runs, a state key, a rate limit): its next execution is a
   * wake-up, not the rerun of a step a crash cut short.
   */
  parked: (jobId: string) => `parked:${jobId}`,
  /** The run was finished by a final failure of a step. */
  runFailed: () => 'run-failed',
  /**
   * The executions of a step job (who ran each, when, and why it ran again): written by the script each
   * execution runs first (load-iteration, begin-tool-call), and the park mark (decision 0019).
   */
  attempts: (jobId: string) => `attempts:${jobId}`,
};

/** How many executions of one step job its attempts record keeps (the latest; `count` has them all). */
export const attemptsKept = 8;

/**
 * Why an execution of a step job ran: the job's first, a retry after a failed attempt (BullMQ's attempt
 * number went up), a wake-up of a parked step, or a takeover (the previous execution ended without
 * committing, failing or parking: its worker died, lost its lock or shut down).
 */
export const attemptCauses = ['first', 'retry', 'wake', 'takeover'] as const;

/** One execution of a step job, as the worker announced it; `cause` and the park are the scripts'. */
export const attemptNoteSchema = z.strictObject({
  /** The worker process (its id in the worker registry, GET /v1/system). */
  worker: z.string().max(100),
  at: z.iso.datetime(),
  /** BullMQ's attempt number: 1 + the failed attempts before it (a takeover or a park does not count). */
  attempt: z.number().int().positive(),
  /** How many times the job had been taken when this execution began (stalls and wake-ups included). */
  started: z.number().int().nonnegative(),
  cause: z.enum(attemptCauses),
  /** The execution parked the step (to wait); it woke at `wake_at` at the latest. */
  parked_at: z.iso.datetime().optional(),
  wake_at: z.iso.datetime().optional(),
});
export type AttemptNote = z.infer<typeof attemptNoteSchema>;
/** What the worker knows of an execution as it begins (the scripts add the cause). */
export type AttemptStart = Pick<AttemptNote, 'worker' | 'at' | 'attempt' | 'started'>;

export const attemptsEntrySchema = z.strictObject({
  v: z.literal(1),
  /** Every execution noted, the ones no longer kept included. */
  count: z.number().int().positive(),
  attempts: z.array(attemptNoteSchema).max(attemptsKept),
});
export type AttemptsEntry = z.infer<typeof attemptsEntrySchema>;

/** A failed attempt's mark (`failed:<job>:<attempt>`): when, and the error's code (absent in older records). */
export const failedAttemptSchema = z.strictObject({
  v: z.literal(1),
  at: z.iso.datetime(),
  code: z.string().max(100).optional(),
});

export const teamStateSchema = z.strictObject({
  v: z.literal(1),
  turns: z.number().int().nonnegative(),
  cursors: z.array(z.number().int().nonnegative()),
});

export const teamSelectionSchema = z.strictObject({
  v: z.literal(1),
  members: z.array(z.number().int().nonnegative()),
  done: z.boolean(),
  /** Why the `llm` coordinator decided so, as it said (cut to maxCoordinatorReasonChars): its chat keeps it. */
  reason: z.string().max(maxCoordinatorReasonChars).optional(),
});
export type TeamSelectionEntry = z.infer<typeof teamSelectionSchema>;

/**
 * What the middleware around a model or tool call decided (docs/extending.md), recorded with the call's commit
 * so that a repeated step reads it instead of deciding again: absent when no middleware changed, routed,
 * refused or noted anything.
 */
export const middlewareDecisionsSchema = z
  .array(
    z.strictObject({
      name: z.string().max(200),
      note: z.json().optional(),
      request_changed: z.literal(true).optional(),
      reply_changed: z.literal(true).optional(),
      routed_to: z.string().max(200).optional(),
      refused: z.string().max(2_000).optional(),
      rejected: z.string().max(2_000).optional(),
    }),
  )
  .max(100);

/** The event kinds an effect may emit (a `compaction` event reports a compaction made, not asked for). */
export const afterEventKinds = ['loop_detected', 'reflection', 'progress'] as const;

/** One effect's decision after a reply, as the journal keeps it. */
export const afterDecisionSchema = z.strictObject({
  effect: z.string().max(200),
  note: z.json().optional(),
  message_id: z.string().max(500).optional(),
  events: z.array(z.enum(afterEventKinds)).max(10).optional(),
  compact: z.literal(true).optional(),
  /** It asked the person the reply entry's `ask` (decision 0049). */
  asked: z.literal(true).optional(),
  /** A note for the agent's memory, written after the reply's commit (once: its call key is the reply's). */
  remember: z
    .strictObject({
      name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/),
      content: z.string().max(16_000),
    })
    .optional(),
});

/**
 * What the after phase decided for one reply (the reply entry's `after`): each effect's decision, the
 * messages that wait for the run's next request (a reply with tool calls: they follow the results), and
 * whether that request is to be compacted first.
 */
export const afterReplyEntrySchema = z.strictObject({
  decisions: z.array(afterDecisionSchema).max(100),
  pending: z.array(messageSchema).max(100),
  compact: z.boolean(),
  /**
   * The question an effect asked the person (decision 0049): the next iteration asks it and waits for the
   * answer, which joins the chat before its request. Its text is bounded as ask_user's and redacted.
   */
  ask: z
    .strictObject({
      effect: z.string().max(200),
      question: z.string().max(4_000),
      options: z.array(z.string().max(200)).max(20),
    })
    .optional(),
});
export type AfterReplyEntry = z.infer<typeof afterReplyEntrySchema>;

export const replyEntrySchema = z.strictObject({
  /** Version 2 (0.3.0) added the `ask` decision and the after phase's question; a version 1 entry reads as it was. */
  v: z.literal(2),
  /** Position of the reply in the run's chat. */
  index: z.number().int().nonnegative(),
  tool_calls: z.array(z.strictObject({ id: z.string(), name: z.string() })),
  /**
   * `retry`: a final answer the output guardrail sent back (a feedback message follows it); `ask`: an answer
   * after which an effect asked the person (`after.ask`), so the run goes on to the next iteration.
   */
  decision: z.enum(['final', 'tools', 'retry', 'ask', 'failed']),
  /** The provider and model that made the reply (absent in older records and for replies made without one). */
  model: z.strictObject({ provider: z.string(), model: z.string() }).optional(),
  /**
   * What the effects decided for the request (absent before effects, and for replies not made by a model
   * request of the run's agent): the request's token count as planned, the estimate of what it sent (the
   * next iteration counts from it and the provider's reported input tokens), the effects that changed the
   * messages or added one, and where the view's summary ended.
   */
  context: z
    .strictObject({
      tokens: z.number().int().nonnegative(),
      sent_estimate: z.number().int().nonnegative(),
      input_tokens: z.number().int().nonnegative(),
      applied: z.array(z.string()),
      summary_up_to: z.number().int().nonnegative().nullable(),
    })
    .optional(),
  /** What the agent's middleware decided around the model call that made the reply. */
  middleware: middlewareDecisionsSchema.optional(),
  /** What the agent's effects decided after the reply (decision 0044); absent when none has an after phase. */
  after: afterReplyEntrySchema.optional(),
});
export type ReplyEntry = z.infer<typeof replyEntrySchema>;

export const resultsEntrySchema = z.strictObject({
  v: z.literal(1),
  index: z.number().int().nonnegative(),
  count: z.number().int().nonnegative(),
});
export type ResultsEntry = z.infer<typeof resultsEntrySchema>;

export const toolIntentSchema = z.strictObject({
  v: z.literal(1),
  /** Lock token of the attempt that recorded the intent. */
  token: z.string(),
  idempotency_key: z.string(),
  at: z.iso.datetime(),
});
export type ToolIntent = z.infer<typeof toolIntentSchema>;

/** The ledger's outcome. The result itself travels as the call's chat entry (see toolEntry). */
export const toolOutcomeSchema = z.strictObject({
  v: z.literal(1),
  is_error: z.boolean(),
  /** How the outcome came about when a worker died during the call. */
  interrupted: z.enum(['rerun', 'outcome_unknown']).optional(),
  at: z.iso.datetime(),
  /** What the agent's middleware decided around the call. */
  middleware: middlewareDecisionsSchema.optional(),
});
export type ToolOutcomeEntry = z.infer<typeof toolOutcomeSchema>;

/** Values of markers that carry no data. */
export const markerEntrySchema = z.strictObject({ v: z.literal(1), at: z.iso.datetime() });

defineRecordKind({ name: 'journal.attempts', version: 1, schema: attemptsEntrySchema });
defineRecordKind({ name: 'journal.failed-attempt', version: 1, schema: failedAttemptSchema });
defineRecordKind({ name: 'journal.team-state', version: 1, schema: teamStateSchema });
defineRecordKind({ name: 'journal.team-selection', version: 1, schema: teamSelectionSchema });
defineRecordKind({
  name: 'journal.reply',
  version: 2,
  schema: replyEntrySchema,
  migrations: { 1: (record: Record<string, unknown>) => record },
});
defineRecordKind({ name: 'journal.results', version: 1, schema: resultsEntrySchema });
defineRecordKind({ name: 'journal.tool-intent', version: 1, schema: toolIntentSchema });
defineRecordKind({ name: 'journal.tool-outcome', version: 1, schema: toolOutcomeSchema });
defineRecordKind({ name: 'journal.marker', version: 1, schema: markerEntrySchema });
