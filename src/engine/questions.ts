import { RatchetError } from '../errors/index.js';
import {
  type Inbox,
  indexPendingQuestions,
  readInbox,
  oldestPendingQuestions as readOldestPendingQuestions,
} from '../redis/pending-inbox.js';
import { getSession } from '../redis/session-store.js';
import {
  normalizeResponse,
  type QuestionKind,
  type QuestionRecord,
  type QuestionResponse,
  type RememberedApproval,
  type RunRecord,
  rememberedApprovalOf,
} from '../workflows/index.js';
import { type EngineParts, notify } from './engine-parts.js';

/** The questions of the client face: a session's pending ones, the inbox across sessions, answers. */

/** Pending questions the first oldestPendingQuestions call enters in the index of their ages, at most. */
const questionsIndexedAtFirst = 10_000;

/** The pending questions of a session. */
export async function listQuestions(parts: EngineParts, sessionId: string): Promise<QuestionRecord[]> {
  if (!(await getSession(parts.context, sessionId)))
    throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
  return parts.store.pendingQuestions(sessionId);
}

/**
 * The pending questions a run waits for: its own, and for a root run those of the runs below it (a
 * delegated agent or a team member asking the user holds up the whole tree).
 */
export async function questionsOfTree(
  parts: EngineParts,
  sessionId: string,
  run: RunRecord,
): Promise<QuestionRecord[]> {
  const pending = await parts.store.pendingQuestions(sessionId);
  const roots = await Promise.all(
    pending.map(async (question) => {
      if (question.run_id === run.id || run.parent !== null) return question.run_id;
      const asker = await parts.store.loadRun(sessionId, question.run_id);
      return asker?.record.root_run_id ?? question.run_id;
    }),
  );
  return pending.filter((_question, index) => roots[index] === run.id);
}

/** Answers a pending question, once, and wakes the step that waits for it. */
export async function respond(
  parts: EngineParts,
  sessionId: string,
  questionId: string,
  response: QuestionResponse,
): Promise<void> {
  const { store } = parts;
  if (!(await getSession(parts.context, sessionId)))
    throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
  const current = await store.readQuestion(sessionId, questionId);
  if (!current)
    throw new RatchetError('question_not_found', `unknown question ${questionId} in session ${sessionId}`);
  const { record } = current;
  const tool = record.tool ? parts.options.findTool?.(record.agent, record.tool.name) : undefined;
  const answer = normalizeResponse(record, response, tool);
  const now = parts.now().toISOString();
  const remember =
    typeof answer === 'object' && answer.remember !== undefined && record.tool
      ? rememberedApprovalOf(answer.remember, { id: record.id, agent: record.agent, tool: record.tool }, now)
      : undefined;
  const result = await store.answerQuestion({
    sessionId,
    questionId,
    response: answer,
    now,
    ...(remember ? { remember } : {}),
  });
  if (result === 'not_found') throw new RatchetError('question_not_found', `unknown question ${questionId}`);
  if (result !== 'answered') {
    throw new RatchetError(
      'question_closed',
      `question ${questionId} is no longer open (${result === 'closed' ? 'answered' : 'its run is finished'})`,
    );
  }
  notify(parts.options.logger, parts.questionClosed, (listener) => listener(record, now));
  await parts.queues.wake(store.shardOf(sessionId), record.job_id);
}

/**
 * Every pending question and approval across sessions, newest first, at most `limit` (GET /v1/questions):
 * the sessions of the runs the index lists as waiting for input. A question record that does not parse is
 * left out and logged, so one bad record does not hide the others.
 */
export function inbox(parts: EngineParts, limit: number): Promise<Inbox> {
  return readInbox(parts.redis, parts.space, limit, (questionId, problem) =>
    parts.options.logger.warn(
      { question_id: questionId, problem },
      'question record does not parse; left out of the inbox',
    ),
  );
}

/**
 * When the oldest pending question of each kind was asked (ms since the epoch; a kind with none is absent),
 * for GET /metrics: read from the run index, never from the question records. The engine's first call
 * also enters the questions pending since before that index existed (one inbox read).
 */
export async function oldestPendingQuestions(
  parts: EngineParts,
): Promise<Partial<Record<QuestionKind, number>>> {
  const { redis, space } = parts;
  parts.pendingQuestionsIndexed ??= inbox(parts, questionsIndexedAtFirst)
    .then((found) => indexPendingQuestions(redis, space, found.questions))
    .catch((error: unknown) => {
      // Tried again by the next call (Redis may have been away).
      parts.pendingQuestionsIndexed = undefined;
      throw error;
    });
  await parts.pendingQuestionsIndexed;
  return readOldestPendingQuestions(redis, space);
}

async function knownSession(parts: EngineParts, sessionId: string): Promise<void> {
  if (!(await getSession(parts.context, sessionId)))
    throw new RatchetError('session_not_found', `unknown session ${sessionId}`);
}

/** The session's remembered approvals, oldest first (GET /v1/sessions/:id/approvals, decision 0046). */
export async function listApprovals(parts: EngineParts, sessionId: string): Promise<RememberedApproval[]> {
  await knownSession(parts, sessionId);
  return parts.store.rememberedApprovals(sessionId);
}

/** Revokes one remembered approval: later calls it covered are asked again (DELETE …/approvals/:key). */
export async function revokeApproval(parts: EngineParts, sessionId: string, key: string): Promise<void> {
  await knownSession(parts, sessionId);
  if (!(await parts.store.revokeApproval(sessionId, key)))
    throw new RatchetError('approval_not_found', `session ${sessionId} has no remembered approval ${key}`);
}
