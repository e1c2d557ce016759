import { z } from 'zod';
import { wireErrorCodes } from '../api/api-error.js';
import type { imagePartSchema, textPartSchema } from '../chat/message.js';
import {
  type EventData,
  type EventKind,
  eventDataSchemas,
  subGoalStatusLineSchema,
} from '../events/event.js';
import { resultMetadataSchema } from '../events/result-metadata.js';
import { usageSchema } from '../models/usage.js';

/**
 * The response shapes the client reads. Events, usage and result metadata are the server's own schemas.
 * The rest mirror src/api/schemas.ts field for field: that module imports the engine's records through
 * src/workflows/index.ts, which drags Redis, BullMQ and Node built-ins into anything that imports it, so a
 * browser bundle cannot take it. test/client/wire-schemas.test.ts compares each schema here with the
 * server's (as JSON Schema) and fails on any drift; once the server's wire schemas live in a module free of
 * the engine, these become imports.
 */

export const errorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(Object.keys(wireErrorCodes) as [keyof typeof wireErrorCodes]),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  }),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;
export type WireErrorCode = keyof typeof wireErrorCodes;

export const acceptedRunSchema = z.strictObject({ run_id: z.string(), session_id: z.string() });
export type AcceptedRun = z.infer<typeof acceptedRunSchema>;

export const usageTotalsSchema = z.strictObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cached_input_tokens: z.number(),
  requests: z.number(),
  cost_usd: z.number(),
});
export type UsageTotals = z.infer<typeof usageTotalsSchema>;

export const sessionSchema = z.strictObject({
  id: z.string(),
  agent: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  status: z.enum(['idle', 'active']),
  active_run_id: z.string().nullable(),
  usage: usageTotalsSchema,
  created_at: z.iso.datetime(),
});
export type Session = z.infer<typeof sessionSchema>;

export const approvalAnswerSchema = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  reason: z.string().optional(),
  arguments: z.record(z.string(), z.unknown()).optional(),
});
/** A decision on a tool call awaiting approval; `arguments` replaces the model's (checked by the server). */
export type ApprovalAnswer = z.infer<typeof approvalAnswerSchema>;

export const questionResponseSchema = z.union([z.string(), approvalAnswerSchema]);
/** Text for `ask_user`, `"raise"`/`"stop"` for `budget`, a decision (or `"approve"`/`"reject"`) for `approval`. */
export type QuestionResponse = z.infer<typeof questionResponseSchema>;

export const questionSchema = z.strictObject({
  id: z.string(),
  session_id: z.string(),
  run_id: z.string(),
  agent: z.string(),
  kind: z.enum(['ask_user', 'approval', 'budget']),
  question: z.string(),
  options: z.array(z.string()),
  tool: z.strictObject({ name: z.string(), tool_call_id: z.string(), arguments: z.string() }).nullable(),
  status: z.enum(['pending', 'answered', 'timed_out', 'cancelled']),
  answer: questionResponseSchema.nullable(),
  answered_by: z.enum(['user', 'timeout']).nullable(),
  timeout_at: z.iso.datetime().nullable(),
  default_answer: z.string().nullable(),
  created_at: z.iso.datetime(),
  answered_at: z.iso.datetime().nullable(),
});
export type Question = z.infer<typeof questionSchema>;

export const questionListSchema = z.strictObject({ questions: z.array(questionSchema) });

const actorSchema = z.strictObject({ agent: z.string(), run_id: z.string() });

export const sessionStateSchema = z.strictObject({ state: z.record(z.string(), z.unknown()) });

export const sessionTaskListSchema = z.strictObject({
  tasks: z.array(
    z.strictObject({
      id: z.string(),
      title: z.string(),
      description: z.string(),
      status: z.enum(['pending', 'in_progress', 'completed', 'failed']),
      assignee: actorSchema.nullable(),
      note: z.string().nullable(),
      created_by: actorSchema,
      updated_by: actorSchema.nullable(),
      created_at: z.iso.datetime(),
      updated_at: z.iso.datetime(),
    }),
  ),
});
export type SessionTask = z.infer<typeof sessionTaskListSchema>['tasks'][number];

export const sessionNoteListSchema = z.strictObject({
  notes: z.array(
    z.strictObject({
      name: z.string(),
      scope: z.enum(['session', 'agent']),
      agent: z.string().nullable(),
      content: z.string(),
      written_by: actorSchema,
      updated_at: z.iso.datetime(),
    }),
  ),
});
export type SessionNote = z.infer<typeof sessionNoteListSchema>['notes'][number];

export const respondAcceptedSchema = z.strictObject({ session_id: z.string(), question_id: z.string() });
export type AnswerAccepted = z.infer<typeof respondAcceptedSchema>;

const subGoalSchema = subGoalStatusLineSchema.extend({ result: z.string().nullable() });

export const progressSchema = z.strictObject({
  fraction: z.number().nullable(),
  message: z.string(),
  at: z.iso.datetime(),
  sub_goals: z.array(subGoalSchema).optional(),
});

export const runSchema = z.strictObject({
  id: z.string(),
  session_id: z.string(),
  agent: z.string(),
  parent_run_id: z.string().nullable(),
  depth: z.number().int().nonnegative(),
  status: z.enum(['queued', 'running', 'waiting', 'waiting_input', 'completed', 'failed', 'cancelled']),
  result: z.string().nullable(),
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
  usage: usageSchema,
  cost_usd: z.number(),
  retry_waste: z.strictObject({
    calls: z.number(),
    input_tokens: z.number(),
    output_tokens: z.number(),
    cost_usd: z.number(),
  }),
  iterations: z.number().int().nonnegative(),
  progress: progressSchema.nullable(),
  pending_question: questionSchema.nullable(),
  created_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
  deadline_at: z.iso.datetime().nullable(),
  max_iterations: z.number().int().positive().nullable(),
  metadata: resultMetadataSchema,
});
export type Run = z.infer<typeof runSchema>;
export type RunStatus = Run['status'];

export const agentListSchema = z.strictObject({
  agents: z.array(
    z.strictObject({
      name: z.string(),
      description: z.string(),
      kind: z.enum(['agent', 'handoff', 'team']),
      usage: usageTotalsSchema,
    }),
  ),
});
export type AgentSummary = z.infer<typeof agentListSchema>['agents'][number];

export const healthSchema = z.strictObject({ status: z.literal('ok') });
export type Health = z.infer<typeof healthSchema>;

/** One event as the SSE route sends it in a frame's `data`: the event's fields and its stream id. */
export type RatchetClientEvent = {
  [Kind in EventKind]: {
    /** The event's id in the session's log (the SSE `id`): resume after it. */
    id: string;
    kind: Kind;
    run_id: string;
    agent: string;
    time: string;
    data: EventData<Kind>;
  };
}[EventKind];

/** The schema of one kind's wire event (the server's data schema for that kind). */
export function wireEventSchemaOf(kind: EventKind) {
  return z.strictObject({
    id: z.string(),
    kind: z.literal(kind),
    run_id: z.string(),
    agent: z.string(),
    time: z.iso.datetime(),
    data: eventDataSchemas[kind],
  });
}

export function isEventKind(kind: string): kind is EventKind {
  return Object.hasOwn(eventDataSchemas, kind);
}

/** What POST /v1/runs takes (the request is validated by the server, which names any invalid field). */
export interface SubmitRunInput {
  /** Text, or parts (text and images). */
  input: string | Array<z.input<typeof textPartSchema> | z.input<typeof imagePartSchema>>;
  agent?: string;
  /** Continue this session; a new one is created when omitted. */
  session_id?: string;
  metadata?: Record<string, unknown>;
  budget?: { tokens?: number; cost_usd?: number; on_exceeded?: 'fail' | 'ask' };
  timeout_s?: number;
  max_iterations?: number;
}
