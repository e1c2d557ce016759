import type { ToolCallPart } from '../../../chat/index.js';
import { RatchetError, Suspension } from '../../../errors/index.js';
import { buildEvent } from '../../../events/event.js';
import { type AskOptions, askProblem } from '../../../tools/index.js';
import { crashPoint } from '../../crash-points.js';
import { questionIdOf } from '../../ids.js';
import type { ToolJobData } from '../../job-data.js';
import type { ApprovalAnswer, QuestionRecord, QuestionResponse } from '../../question-record.js';
import { matchingApproval } from '../../remembered-approval-match.js';
import { isPark, type Park, park } from '../runner/step-action.js';
import type { StepContext } from '../runner/step-context.js';

/**
 * The one place a wait becomes a throw: inside a tool handler (`ctx.ask()`, `ctx.delegate()`,
 * `ctx.session.park()`), which cannot return it and is unwound instead. The tool step catches it at the
 * handler's boundary and returns it to the runner as data (see `parkOf`).
 */
export function suspensionOf(parked: Park, waitingFor: string): Suspension {
  return new Suspension(parked.wakeAt, waitingFor, parked.recheck);
}

/** A Suspension that unwound a tool handler, as the park it stands for; anything else is thrown on. */
export function parkOf(error: unknown): Park {
  if (error instanceof Suspension) return park(error.wakeAt, error.recheck);
  throw error;
}

type NewQuestion = Pick<
  QuestionRecord,
  'id' | 'kind' | 'question' | 'options' | 'tool' | 'default_answer'
> & {
  timeoutMs: number | undefined;
};

/**
 * The answer to a question this step asks; when there is none yet, the question is recorded (once) and the
 * step is suspended. A timed-out question gets its default answer here.
 */
/** Who asks: the run of the step (tool and iteration steps alike). */
type Asker = Pick<ToolJobData, 'session_id' | 'run_id' | 'agent'>;

async function answerOf(
  context: StepContext,
  data: Asker,
  asked: NewQuestion,
): Promise<QuestionResponse | Park> {
  const { services } = context;
  const nowMs = services.now().getTime();
  const existing = await context.store.readQuestion(asked.id);
  if (existing) {
    const question = existing.record;
    if (question.status === 'answered' || question.status === 'timed_out') return question.answer ?? '';
    if (question.status === 'cancelled')
      throw new RatchetError('cancelled', `question ${question.id} was cancelled`);
    const timeoutAt = question.timeout_at ? Date.parse(question.timeout_at) : undefined;
    if (timeoutAt !== undefined && timeoutAt <= nowMs && question.default_answer !== null) {
      const closedAt = services.now().toISOString();
      const { result, question: after } = await context.store.answerQuestion({
        questionId: question.id,
        response: question.default_answer,
        by: 'timeout',
        now: closedAt,
      });
      if (result === 'run_finished')
        throw new RatchetError('cancelled', `the run of ${question.id} is finished`);
      if (result === 'answered' && after)
        services.observer?.questionTimedOut(after, after.answered_at ?? closedAt);
      if (result === 'answered' || result === 'closed') return after?.answer ?? question.default_answer;
    }
    return park(
      Math.min(timeoutAt ?? Number.POSITIVE_INFINITY, nowMs + services.questionRecheckMs),
      answeredMeanwhile(context, question.id),
    );
  }
  const now = services.now().toISOString();
  const { timeoutMs, ...fields } = asked;
  const timeoutAt = timeoutMs === undefined ? null : new Date(nowMs + timeoutMs).toISOString();
  const record = pendingQuestion(context, data, fields, timeoutAt, now);
  const event = buildEvent(
    'ask_user',
    { id: data.run_id, agent: data.agent },
    {
      question_id: record.id,
      kind: record.kind,
      question: record.question,
      options: record.options,
      tool: record.tool,
      timeout_at: timeoutAt,
    },
    now,
  );
  const code = await context.store.askQuestion(record, event);
  if (code === 'LOCK_LOST')
    throw new RatchetError('lock_lost', `asking ${record.id}: the job's lock was lost`);
  if (code === 'NO_RUN' || code === 'RUN_FINISHED')
    throw new RatchetError('cancelled', `the run of ${record.id} is finished`);
  const wakeAt = timeoutAt
    ? Math.min(Date.parse(timeoutAt), nowMs + services.questionRecheckMs)
    : nowMs + services.questionRecheckMs;
  return park(wakeAt, answeredMeanwhile(context, record.id));
}

/**
 * The recheck of a step parked on a question: an answer that came between the question's write and the park
 * found the step still running, and its wake left it alone (a step not parked is not promoted), so the step
 * would sleep until its recheck time (`worker.question_recheck_ms`, a minute) with its answer there. Once
 * parked, the step reads the question again and is woken when it is no longer pending.
 */
function answeredMeanwhile(context: StepContext, questionId: string): () => Promise<boolean> {
  return async () => {
    const now = await context.store.readQuestion(questionId);
    return now !== undefined && now.record.status !== 'pending';
  };
}

/** A question of this step as it is first recorded: pending, unanswered. */
function pendingQuestion(
  context: StepContext,
  data: Asker,
  fields: Omit<NewQuestion, 'timeoutMs'>,
  timeoutAt: string | null,
  now: string,
): QuestionRecord {
  return {
    v: 1,
    ...fields,
    session_id: data.session_id,
    run_id: data.run_id,
    agent: data.agent,
    status: 'pending',
    answer: null,
    answered_by: null,
    timeout_at: timeoutAt,
    job_id: context.jobId,
    created_at: now,
    answered_at: null,
  };
}

/** The question of an approval of a call (asked, or answered by a remembered approval). */
function approvalQuestion(id: string, call: ToolCallPart): Omit<NewQuestion, 'timeoutMs'> {
  return {
    id,
    kind: 'approval',
    question: `Allow ${call.name}(${call.arguments})?`,
    options: ['approve', 'reject'],
    tool: { name: call.name, tool_call_id: call.id, arguments: call.arguments },
    default_answer: null,
  };
}

/** ToolContext.ask for one execution of a tool handler: the n-th ask of the handler is question n. */
export function askFunction(
  context: StepContext,
  data: ToolJobData,
): (options: AskOptions) => Promise<string> {
  let sequence = 0;
  return async (options) => {
    if (options.timeoutMs !== undefined && options.defaultAnswer === undefined) {
      throw new Error('ask: a timeout needs a defaultAnswer');
    }
    // Any tool may ask with text a model chose: the built-in ask_user's bounds hold for every one.
    const problem = askProblem(options);
    if (problem !== undefined) throw new Error(`ask: ${problem}`);
    const id = questionIdOf.ask(context.jobId, sequence++);
    const answer = await answerOf(context, data, {
      id,
      kind: 'ask_user',
      question: options.question,
      options: options.options ?? [],
      tool: null,
      default_answer: options.defaultAnswer ?? null,
      timeoutMs: options.timeoutMs,
    });
    if (isPark(answer)) throw suspensionOf(answer, `an answer to ${id}`);
    return typeof answer === 'string' ? answer : JSON.stringify(answer);
  };
}

/** A person's decision on a call of a tool that requires approval (asked once; the step waits for it). */
export async function approvalOf(
  context: StepContext,
  data: ToolJobData,
  call: ToolCallPart,
): Promise<ApprovalAnswer | Park> {
  const id = questionIdOf.approval(context.jobId);
  const remembered = await rememberedApprovalOf(context, data, call, id);
  if (remembered) return remembered;
  const answer = await answerOf(context, data, { ...approvalQuestion(id, call), timeoutMs: undefined });
  if (isPark(answer)) return answer;
  if (typeof answer === 'string') return { decision: answer === 'approve' ? 'approve' : 'reject' };
  return answer;
}

/**
 * The call approved by one of the session's remembered approvals (decision 0046), decided once: when no
 * approval question was recorded for this step yet and an approval covers the call, the question is recorded
 * answered by it (with an event naming it). Undefined when the step must ask (or read what it asked).
 */
async function rememberedApprovalOf(
  context: StepContext,
  data: ToolJobData,
  call: ToolCallPart,
  id: string,
): Promise<ApprovalAnswer | undefined> {
  if (await context.store.readQuestion(id)) return undefined;
  const approval = matchingApproval(await context.store.rememberedApprovals(), call);
  if (!approval) return undefined;
  const now = context.services.now().toISOString();
  const answer: ApprovalAnswer = { decision: 'approve' };
  const record: QuestionRecord = {
    ...pendingQuestion(context, data, approvalQuestion(id, call), null, now),
    status: 'answered',
    answer,
    answered_by: 'remembered',
    answered_at: now,
  };
  const event = buildEvent(
    'question_answered',
    { id: data.run_id, agent: data.agent },
    {
      question_id: id,
      answered_by: 'remembered',
      answer,
      remembered: {
        key: approval.key,
        tool: approval.tool,
        scope: approval.scope,
        path_prefix: approval.path_prefix,
      },
    },
    now,
  );
  const code = await context.store.approveByRemembered(record, event, approval.key);
  if (code === 'LOCK_LOST') throw new RatchetError('lock_lost', `approving ${id}: the job's lock was lost`);
  if (code === 'NO_RUN' || code === 'RUN_FINISHED')
    throw new RatchetError('cancelled', `the run of ${id} is finished`);
  // EXISTS: an earlier attempt decided (read it); REVOKED: revoked since it was read (ask).
  if (code !== 'OK') return undefined;
  crashPoint('tool.after_remembered_approval');
  return answer;
}

/**
 * The run went over a budget that says `on_exceeded: ask`: the user raises it (true) or stops the run (false).
 * The step waits for the answer like any question; `raises` numbers the question.
 */
export async function raiseBudget(
  context: StepContext,
  data: Asker,
  message: string,
  raises: number,
): Promise<boolean | Park> {
  const answer = await answerOf(context, data, {
    id: questionIdOf.budget(context.jobId, raises),
    kind: 'budget',
    question: `${message}. Raise the budget (once more the same amount) and go on, or stop the run?`,
    options: ['raise', 'stop'],
    tool: null,
    default_answer: null,
    timeoutMs: undefined,
  });
  if (isPark(answer)) return answer;
  return answer === 'raise';
}

/**
 * The person's answer to the question an effect's after phase asked about the previous reply (decision
 * 0049), asked by the iteration that follows it, once, exactly as ask_user asks; the step waits for it.
 */
export async function effectQuestionAnswer(
  context: StepContext,
  data: Asker,
  asked: { question: string; options: readonly string[] },
): Promise<string | Park> {
  const answer = await answerOf(context, data, {
    id: questionIdOf.effect(context.jobId),
    kind: 'ask_user',
    question: asked.question,
    options: [...asked.options],
    tool: null,
    default_answer: null,
    timeoutMs: undefined,
  });
  if (isPark(answer)) return answer;
  return typeof answer === 'string' ? answer : JSON.stringify(answer);
}
