import { z } from 'zod';
// The record module itself, not the workflows index: the wire is shared with the typed client, which runs in
// browsers too and must not pull in the engine.
import { questionRecordSchema, questionResponseSchema } from '../workflows/question-record.js';
import { rememberedApprovalSchema as rememberedApprovalRecordSchema } from '../workflows/remembered-approval-record.js';

/** Questions to people on the wire: a session's, the inbox of every session's, and the answer to one. */

export type { ApprovalAnswer, QuestionResponse } from '../workflows/question-record.js';

export const questionSchema = questionRecordSchema.omit({ v: true, job_id: true }).meta({
  id: 'Question',
  description: 'A question to a person (ask_user) or a tool call awaiting approval.',
});
export type Question = z.output<typeof questionSchema>;

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
/** GET /v1/questions: every pending question of every session, newest first; `truncated` when more are. */
export type Inbox = z.output<typeof inboxSchema>;
export type InboxQuestion = Inbox['questions'][number];

export const respondBodySchema = z.strictObject({
  question_id: z.string().min(1),
  response: questionResponseSchema.describe(
    'Text for an ask_user question; {decision, reason?, arguments?, remember?} for a tool approval (remember: "tool", "arguments" or {path_prefix}).',
  ),
});

export const respondAcceptedSchema = z.strictObject({ session_id: z.string(), question_id: z.string() });
export type AnswerAccepted = z.output<typeof respondAcceptedSchema>;

/** GET /v1/sessions/:id/approvals: the session's remembered approvals (decision 0046). */
export const rememberedApprovalSchema = rememberedApprovalRecordSchema.omit({ v: true }).meta({
  id: 'RememberedApproval',
  description:
    'A tool call a person approved for the rest of the session: every call of the tool (scope tool), calls with exactly these arguments (arguments), or calls whose path arguments are inside path_prefix.',
});
export type RememberedApprovalView = z.output<typeof rememberedApprovalSchema>;

export const rememberedApprovalListSchema = z.strictObject({
  approvals: z.array(rememberedApprovalSchema).describe('Oldest first.'),
});

export const approvalParamsSchema = z.strictObject({
  id: z.string().min(1).max(200),
  key: z.string().min(1).max(200),
});
