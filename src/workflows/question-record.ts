import { z } from 'zod';
import { defineRecordKind } from '../schemas/record-kinds.js';
import { rememberSchema } from './remembered-approval-record.js';

/** A person's decision on a tool call that needs approval. */
export const approvalAnswerSchema = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  /** Why it was rejected: the model sees it. */
  reason: z.string().optional(),
  /** Approve with these arguments instead of the model's (validated against the tool's schema). */
  arguments: z.record(z.string(), z.unknown()).optional(),
  /**
   * Approve the same call for the rest of the session (decision 0046): `tool`, `arguments` or
   * `{path_prefix}`. Goes with decision "approve" and the model's own arguments.
   */
  remember: rememberSchema.optional(),
});
export type ApprovalAnswer = z.infer<typeof approvalAnswerSchema>;

/** What a client may send as a response: text, or (for approvals) a decision. */
export const questionResponseSchema = z.union([z.string(), approvalAnswerSchema]);
export type QuestionResponse = z.infer<typeof questionResponseSchema>;

export const questionStatusSchema = z.enum(['pending', 'answered', 'timed_out', 'cancelled']);

/** ask_user: an agent's question; approval: a tool call waiting; budget: raise the run's budget or stop. */
export const questionKindSchema = z.enum(['ask_user', 'approval', 'budget']);
export type QuestionKind = z.infer<typeof questionKindSchema>;
export const questionKinds: readonly QuestionKind[] = questionKindSchema.options;

/** A question to a person, first-class: several may be pending in one session. Version 1. */
export const questionRecordSchema = z.strictObject({
  v: z.literal(1),
  id: z.string(),
  session_id: z.string(),
  run_id: z.string(),
  agent: z.string(),
  kind: questionKindSchema,
  question: z.string(),
  options: z.array(z.string()),
  /** The call awaiting approval (kind approval). */
  tool: z.strictObject({ name: z.string(), tool_call_id: z.string(), arguments: z.string() }).nullable(),
  status: questionStatusSchema,
  answer: questionResponseSchema.nullable(),
  /** `remembered`: a remembered approval of the session answered it without asking (decision 0046). */
  answered_by: z.enum(['user', 'timeout', 'remembered']).nullable(),
  /** When the default answer applies, if the question has a timeout. */
  timeout_at: z.iso.datetime().nullable(),
  default_answer: z.string().nullable(),
  /** The step job that waits for the answer (promoted when it comes). */
  job_id: z.string(),
  created_at: z.iso.datetime(),
  answered_at: z.iso.datetime().nullable(),
});
export type QuestionRecord = z.infer<typeof questionRecordSchema>;

/** How answering a question ended: answered now, unknown, answered or closed before, or its run is finished. */
export type AnswerResult = 'answered' | 'not_found' | 'closed' | 'run_finished';

defineRecordKind({ name: 'question', version: 1, schema: questionRecordSchema });
